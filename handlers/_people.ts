/**
 * Shared helpers of the tasks, reminders and directory capabilities: the turn's database, the asking
 * member, department names, and person references resolved to one member (ambiguous → clarification).
 */
import { HONORIFICS } from '../src/authorization/directory';
import type { Db } from '../src/db/prisma';
import { isSenderAlias } from '../src/guardian/param-values';
import { ClarificationNeeded } from '../src/tools/clarification';
import { resolvePerson, type PersonCandidate } from '../src/tools/person-resolver';
import { ToolError, type ToolContext, type ToolServices } from '../src/tools/types';

/** The asking member of a turn. */
export type Sender = NonNullable<ToolContext['member']>;

/** What these helpers read: a handler's context or a `describe` context. */
export type PeopleContext = Pick<ToolContext, 'orgId' | 'member'> & {
  services: Pick<ToolServices, 'db' | 'directory'>;
};

/** A resolved member with the name of their department (for labels such as 「田中太郎（東京営業課）」). */
export interface ResolvedPerson extends PersonCandidate {
  departmentName: string | null;
}

/** The Prisma client injected for this turn. */
export function dbOf(ctx: PeopleContext): Db {
  return ctx.services.db;
}

/** The asking member; unknown senders cannot use these tools. */
export function requireSender(ctx: PeopleContext): Sender {
  if (!ctx.member) throw new ToolError('This needs a known member of the organisation as the sender.', 'NO_MEMBER');
  return ctx.member;
}

/** Department id → name for one organisation (from the turn's cached directory when it has one). */
export async function departmentNames(ctx: PeopleContext): Promise<Map<string, string>> {
  const directory = ctx.services.directory;
  const rows = directory
    ? (await directory()).departments
    : await dbOf(ctx).department.findMany({ where: { orgId: ctx.orgId }, select: { id: true, name: true } });
  return new Map(rows.map((d) => [d.id, d.name ?? d.id]));
}

/** 「田中太郎（東京営業課）」, or just the name without a department. */
export function personLabel(name: string, departmentName: string | null | undefined): string {
  return departmentName ? `${name}（${departmentName}）` : name;
}

/** 「田中」 → 「田中さん」; a reference that already ends in an honorific stays as it is. */
function politeRef(ref: string): string {
  const r = ref.trim();
  return HONORIFICS.test(r) ? r : `${r}さん`;
}

/**
 * Resolves a person reference (id, name, alias, or a sender alias such as 「自分」) to one active member
 * of the turn's organisation.
 * Several matches → {@link ClarificationNeeded} asking 「田中さんが2人います。どちらの方ですか？」 with
 * options such as 「田中太郎（東京営業課）」; no match → ToolError telling the model to ask.
 */
export async function resolvePersonOrAsk(ctx: PeopleContext, ref: string): Promise<ResolvedPerson> {
  const db = dbOf(ctx);
  // The Guardian rewrites 「自分」/"me" to the sender's id; this is the fallback when it did not run.
  const lookup = isSenderAlias(ref) && ctx.member ? ctx.member.id : ref;
  const r = await resolvePerson({ db, directory: ctx.services.directory }, ctx.orgId, lookup);
  if (r.status === 'not_found') {
    throw new ToolError(`No member matches "${ref}". Ask the person who is meant.`, 'UNKNOWN_PERSON');
  }
  const depts = await departmentNames(ctx);
  const withDept = (c: PersonCandidate): ResolvedPerson => ({
    ...c,
    departmentName: c.departmentId ? (depts.get(c.departmentId) ?? null) : null,
  });
  if (r.status === 'found') return withDept(r.person);
  const options = r.candidates.map(withDept).map((c) => personLabel(c.name, c.departmentName));
  throw new ClarificationNeeded(
    `${politeRef(ref)}が${r.candidates.length}人います。どちらの方ですか？`,
    options,
    `There are ${r.candidates.length} people called ${ref.trim()}. Which one do you mean?`,
  );
}

/** The member's display name (for rows that only carry an id). */
export async function memberName(db: Db, orgId: string, memberId: string): Promise<string> {
  const m = await db.member.findUnique({ where: { orgId_id: { orgId, id: memberId } }, select: { name: true } });
  return m?.name ?? memberId;
}

/** True for a unique-constraint violation (a concurrent attempt of the same turn won the race). */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'P2002';
}

/**
 * Idempotent creation keyed by the turn's idempotency key (R-T3): returns the row an earlier attempt
 * made, otherwise creates it; a concurrent duplicate (unique violation) re-reads the winner's row.
 */
export async function createOnce<T>(
  find: () => Promise<T | null>,
  create: () => Promise<T>,
  opts: { foundNothing?: boolean } = {},
): Promise<{ row: T; created: boolean }> {
  // A caller that has just looked (and found nothing) goes straight to the insert; a concurrent attempt that
  // inserted meanwhile still loses on the unique key and gets the winner's row.
  const existing = opts.foundNothing ? null : await find();
  if (existing) return { row: existing, created: false };
  try {
    return { row: await create(), created: true };
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const winner = await find();
    if (!winner) throw err;
    return { row: winner, created: false };
  }
}
