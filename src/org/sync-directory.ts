import { readClosingDays } from '../core/business-calendar';
import { Prisma } from '../db/prisma';
import { syncDirectorySchedules } from '../scheduler/schedule-store';
import type { DirectoryRows } from './directory-rows';
import type { DirectoryEntity, EntityCounts, ImportSummary } from './import-summary';
import { writeAccountChanges } from './platform-accounts';
import { diffRows, type RowDiff } from '../db/row-diff';

/** A Prisma interactive-transaction client. */
export type Tx = Prisma.TransactionClient;

/**
 * Makes the organisation's rows match `rows` inside the caller's transaction, writing only rows that
 * differ. Entries missing from `rows` are deleted, except members, which are marked inactive (and lose
 * their platform accounts, since only listed members' accounts are kept).
 */
export async function syncDirectory(tx: Tx, rows: DirectoryRows): Promise<ImportSummary> {
  const orgId = rows.org.id;
  const organization = await syncOrganization(tx, rows.org);
  const departments = await tx.department.findMany({ where: { orgId } });
  const members = await tx.member.findMany({ where: { orgId } });
  const accounts = await tx.platformAccount.findMany({ where: { orgId } });
  const rooms = await tx.room.findMany({ where: { orgId } });
  const policies = await tx.policy.findMany({ where: { orgId } });
  const byId = (r: Record<string, unknown>) => String(r.id);
  const byAccount = (r: Record<string, unknown>) => `${String(r.platform)}:${String(r.accountId)}`;
  const byRoom = (r: Record<string, unknown>) => `${String(r.platform)}:${String(r.externalId)}`;

  const d = diffRows(departments, rows.departments, byId);
  await tx.department.deleteMany({ where: { orgId, id: { in: d.remove.map(byId) } } });
  await writeRows(
    d,
    (data) => tx.department.createMany({ data }),
    (r) => tx.department.update({ where: { orgId_id: { orgId, id: r.id } }, data: r }),
  );

  const m = diffRows(members, rows.members, byId);
  await writeRows(
    m,
    (data) => tx.member.createMany({ data }),
    (r) => tx.member.update({ where: { orgId_id: { orgId, id: r.id } }, data: r }),
  );
  const gone = m.remove.filter((r) => r.active === true).map(byId);
  await tx.member.updateMany({ where: { orgId, id: { in: gone } }, data: { active: false } });

  // Accounts of removed members (and changed accounts) are deleted before new ones take their keys.
  const a = diffRows(accounts, rows.accounts, byAccount);
  await writeAccountChanges(tx, orgId, a);

  const r = diffRows(rooms, rows.rooms, byRoom);
  await deleteByKeys(r.remove, (x) =>
    tx.room.deleteMany({
      where: { orgId, OR: x.map((y) => ({ platform: String(y.platform), externalId: String(y.externalId) })) },
    }),
  );
  await writeRows(
    r,
    (data) => tx.room.createMany({ data }),
    (x) =>
      tx.room.update({ where: { platform_externalId: { platform: x.platform, externalId: x.externalId } }, data: x }),
  );

  const p = diffRows(policies, rows.policies, byId);
  const policyData = (x: DirectoryRows['policies'][number]) => ({ ...x, rule: x.rule ?? Prisma.DbNull });
  await tx.policy.deleteMany({ where: { orgId, id: { in: p.remove.map(byId) } } });
  await writeRows(
    p,
    (data) => tx.policy.createMany({ data: data.map(policyData) }),
    (x) => tx.policy.update({ where: { orgId_id: { orgId, id: x.id } }, data: policyData(x) }),
  );

  const s = await syncDirectorySchedules(tx, orgId, rows.schedules);

  const counts: Record<DirectoryEntity, EntityCounts> = {
    departments: countsOf(d, rows.departments.length),
    members: { ...countsOf(m, rows.members.length), removed: gone.length },
    platformAccounts: countsOf(a, rows.accounts.length),
    rooms: countsOf(r, rows.rooms.length),
    policies: countsOf(p, rows.policies.length),
    schedules: countsOf(s, rows.schedules.length),
  };
  const changed =
    organization !== 'unchanged' || Object.values(counts).some((c) => c.created + c.updated + c.removed > 0);
  return { orgId, organization, counts, inactiveMembers: m.remove.length, changed };
}

async function syncOrganization(tx: Tx, org: DirectoryRows['org']): Promise<ImportSummary['organization']> {
  const existing = await tx.organization.findUnique({ where: { id: org.id } });
  if (!existing) {
    await tx.organization.create({ data: org });
    return 'created';
  }
  const sameGuilds = [...(existing.discordGuildIds ?? [])].sort().join(',') === org.discordGuildIds.join(',');
  const same =
    existing.name === org.name &&
    existing.timezone === org.timezone &&
    existing.values === org.values &&
    existing.quietHours === org.quietHours &&
    JSON.stringify(readClosingDays(existing.closingDays)) === JSON.stringify(org.closingDays);
  if (same && sameGuilds) return 'unchanged';
  await tx.organization.update({ where: { id: org.id }, data: org });
  return 'updated';
}

async function writeRows<T>(
  diff: RowDiff<T>,
  createMany: (rows: T[]) => Promise<unknown>,
  update: (row: T) => Promise<unknown>,
): Promise<void> {
  if (diff.create.length > 0) await createMany(diff.create);
  for (const row of diff.update) await update(row);
}

async function deleteByKeys(
  rows: Array<Record<string, unknown>>,
  remove: (rows: Array<Record<string, unknown>>) => Promise<unknown>,
): Promise<void> {
  if (rows.length > 0) await remove(rows);
}

function countsOf(diff: RowDiff<unknown>, total: number): EntityCounts {
  return { total, created: diff.create.length, updated: diff.update.length, removed: diff.remove.length };
}
