import type { Db, Prisma } from '../db/prisma';
import type { RowDiff } from '../db/row-diff';

/**
 * The single writer of `platform_accounts` (a member's identity on ChatWork, Discord or the console): the
 * directory import's changes, and the console identity of a member the directory gave none.
 */

/** One account row as the directory describes it. */
export interface AccountRow {
  platform: string;
  accountId: string;
  orgId: string;
  memberId: string;
}

/**
 * The console identity of a member without a listed one: `<org>:<member>` (account ids are global across
 * organisations; organisation ids contain no ":").
 */
export function consoleAccountId(orgId: string, memberId: string): string {
  return `${orgId}:${memberId}`;
}

/**
 * Applies a directory import's account changes inside its transaction: removed ones (of removed members, or
 * changed) are deleted before new ones take their keys.
 */
export async function writeAccountChanges(
  tx: Prisma.TransactionClient,
  orgId: string,
  diff: RowDiff<AccountRow>,
): Promise<void> {
  if (diff.remove.length > 0)
    await tx.platformAccount.deleteMany({
      where: { orgId, OR: diff.remove.map((x) => ({ platform: String(x.platform), accountId: String(x.accountId) })) },
    });
  if (diff.create.length > 0) await tx.platformAccount.createMany({ data: diff.create });
  for (const r of diff.update)
    await tx.platformAccount.update({
      where: { platform_accountId: { platform: r.platform, accountId: r.accountId } },
      data: r,
    });
}

/**
 * The console identity of a member the directory gave none (databases imported before console ids were
 * implicit), created as the import would; null when another member holds it.
 */
export async function ensureConsoleAccount(db: Db, orgId: string, memberId: string): Promise<string | null> {
  const accountId = consoleAccountId(orgId, memberId);
  await db.platformAccount.createMany({
    data: [{ platform: 'console', accountId, orgId, memberId }],
    skipDuplicates: true,
  });
  const row = await db.platformAccount.findUnique({
    where: { platform_accountId: { platform: 'console', accountId } },
  });
  return row?.orgId === orgId && row.memberId === memberId ? accountId : null;
}
