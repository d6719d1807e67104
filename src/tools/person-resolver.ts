import { matchMembers, type Directory } from '../authorization/directory';
import type { Db } from '../db/prisma';

export interface PersonCandidate {
  memberId: string;
  name: string;
  departmentId: string | null;
  /** Platform account ids of this member (for ChatWork to_ids etc.). */
  accounts: Record<string, string>;
}

export type PersonResolution =
  | { status: 'found'; person: PersonCandidate }
  | { status: 'ambiguous'; candidates: PersonCandidate[] }
  | { status: 'not_found' };

/**
 * Resolves "田中さん" / "tanaka-taro" / "太郎" / "Tanaka" / 「たなか」 to one active member of the organisation
 * with the shared matcher (authorization/names.ts: id, written name or alias, reading and romaji). Several
 * matches → ambiguous: the caller asks the person to choose and touches nobody (the AuthorizationGate relies on
 * this for ambiguous names).
 */
export async function resolvePerson(
  source: { db: Db; directory?: () => Promise<Directory> },
  orgId: string,
  ref: string,
): Promise<PersonResolution> {
  // The cached directory when the turn has one (its members are the active ones, in id order).
  const members = source.directory
    ? (await source.directory()).members
    : await source.db.member.findMany({
        where: { orgId, active: true },
        select: {
          id: true,
          name: true,
          departmentId: true,
          aliases: true,
          reading: true,
          romaji: true,
          dictionaryReading: true,
          accounts: true,
        },
        orderBy: { id: 'asc' },
      });
  const toCandidate = (m: (typeof members)[number]): PersonCandidate => ({
    memberId: m.id,
    name: m.name ?? m.id,
    departmentId: m.departmentId,
    accounts: Object.fromEntries((m.accounts ?? []).map((a) => [a.platform, a.accountId])),
  });
  // The same matching as the AuthorizationGate's, so the gate checked exactly who is touched here.
  const partial = matchMembers(ref, members);
  if (partial.length === 1) return { status: 'found', person: toCandidate(partial[0]!) };
  if (partial.length === 0) return { status: 'not_found' };
  return { status: 'ambiguous', candidates: partial.map(toCandidate) };
}
