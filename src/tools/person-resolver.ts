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

const HONORIFICS = /(さん|様|さま|くん|君|ちゃん|氏|殿|先輩|部長|課長|社長|san)$/i;

/** Normalises a person reference: width, spaces, trailing honorifics. */
export function normaliseName(s: string): string {
  let n = s.normalize('NFKC').replace(/[\s\u3000]+/g, '').toLowerCase();
  for (let i = 0; i < 2; i++) n = n.replace(HONORIFICS, '');
  return n;
}

/**
 * Resolves "田中さん" / "tanaka-taro" / "太郎" to one active member of the organisation: exact id,
 * then exact name or alias, then family/given-name prefix. Several matches → ambiguous (the caller
 * asks the person to choose); members of the current room are preferred when that settles it.
 */
export async function resolvePerson(db: Db, orgId: string, ref: string, opts: { roomMemberIds?: string[] } = {}): Promise<PersonResolution> {
  const members = await db.member.findMany({ where: { orgId, active: true }, include: { accounts: true }, orderBy: { id: 'asc' } });
  const toCandidate = (m: (typeof members)[number]): PersonCandidate => ({
    memberId: m.id, name: m.name, departmentId: m.departmentId,
    accounts: Object.fromEntries(m.accounts.map((a) => [a.platform, a.accountId])),
  });
  const byId = members.find((m) => m.id === ref.trim());
  if (byId) return { status: 'found', person: toCandidate(byId) };
  const q = normaliseName(ref);
  if (!q) return { status: 'not_found' };
  const exact = members.filter((m) => normaliseName(m.name) === q || m.aliases.some((a) => normaliseName(a) === q));
  const partial = exact.length > 0 ? exact : members.filter((m) => normaliseName(m.name).startsWith(q) || normaliseName(m.name).endsWith(q));
  if (partial.length === 1) return { status: 'found', person: toCandidate(partial[0]!) };
  if (partial.length === 0) return { status: 'not_found' };
  const inRoom = opts.roomMemberIds ? partial.filter((m) => opts.roomMemberIds!.includes(m.id)) : [];
  if (inRoom.length === 1) return { status: 'found', person: toCandidate(inRoom[0]!) };
  return { status: 'ambiguous', candidates: partial.map(toCandidate) };
}
