import type { Db } from '../db/prisma';
import { isSenderAlias } from '../guardian/param-values';
import { SCOPE_FIELDS, type DepartmentNode } from './scope';

/** A member as the gate needs it to resolve and scope-check references. */
export interface DirectoryMember {
  id: string;
  departmentId: string | null;
  aliases?: readonly string[];
  name?: string;
  /** The member's platform accounts (for mentions and ChatWork task assignees). */
  accounts?: readonly { platform: string; accountId: string }[];
}

/** Who a task belongs to, for the `task` parameter role (completing someone's task). */
export interface TaskOwner {
  assigneeMemberId: string;
  createdByMemberId: string | null;
}

/** The organisation directory the gate checks targets against (active members only). */
export interface Directory {
  departments: readonly (DepartmentNode & { name?: string })[];
  members: readonly DirectoryMember[];
  /** Every platform account the directory maps, inactive members' too (a room member with one is no guest). */
  knownAccounts?: readonly { platform: string; accountId: string }[];
  /** Owners of the tasks a proposal names (see {@link withReferencedTasks}); missing = unknown task. */
  tasks?: ReadonlyMap<string, TaskOwner>;
}

/**
 * Loads the departments and active members (with their platform accounts) of one organisation, in id order, and
 * every platform account it maps.
 * Errors propagate (fail-closed).
 */
export async function loadDirectory(
  db: Pick<Db, 'department' | 'member' | 'platformAccount'>,
  orgId: string,
): Promise<Directory> {
  const [departments, members, knownAccounts] = await Promise.all([
    db.department.findMany({ where: { orgId }, select: { ...SCOPE_FIELDS, name: true } }),
    db.member.findMany({
      where: { orgId, active: true },
      select: {
        id: true,
        departmentId: true,
        name: true,
        aliases: true,
        accounts: { select: { platform: true, accountId: true } },
      },
      orderBy: { id: 'asc' },
    }),
    db.platformAccount.findMany({ where: { orgId }, select: { platform: true, accountId: true } }),
  ]);
  return { departments, members, knownAccounts };
}

/** The directory plus the owners of the given task ids (one query; none when there are no ids). */
export async function withReferencedTasks(
  db: Pick<Db, 'task'>,
  orgId: string,
  directory: Directory,
  taskIds: readonly string[],
): Promise<Directory> {
  if (taskIds.length === 0) return directory;
  const rows = await db.task.findMany({
    where: { orgId, id: { in: [...taskIds] } },
    select: { id: true, assigneeMemberId: true, createdByMemberId: true },
  });
  return { ...directory, tasks: new Map(rows.map((t) => [t.id, t])) };
}

/** Honorifics and titles people put after a name (「田中さん」「田中部長」「Tanaka-san」). */
export const HONORIFICS = /(さん|様|さま|くん|君|ちゃん|氏|殿|先輩|部長|課長|社長|-?san)$/i;

/** Width, spaces and case normalised; honorifics kept (so that 「社長」 stays findable as an alias). */
export function plainName(s: string): string {
  return s
    .normalize('NFKC')
    .replace(/[\s\u3000]+/g, '')
    .toLowerCase();
}

/**
 * A person reference normalised for matching: width, spaces, case, and up to two trailing honorifics
 * (「田中部長さん」 → 「田中」). The one normalisation used by the AuthorizationGate and the handlers, so the
 * gate checks exactly the member the handler will touch.
 */
export function normaliseName(s: string): string {
  let n = plainName(s);
  for (let i = 0; i < 2; i++) n = n.replace(HONORIFICS, '');
  return n;
}

/**
 * Members a reference points to, in the handlers' resolution order: an exact member id; otherwise every
 * member whose name or alias matches after {@link normaliseName}; otherwise members whose name starts or
 * ends with it (「太郎」 → 田中太郎). Empty = unknown; several = ambiguous (the handler asks which one).
 */
export function matchMembers<M extends DirectoryMember>(ref: string, members: readonly M[]): M[] {
  const trimmed = ref.trim();
  if (trimmed === '') return [];
  const byId = members.find((m) => m.id === trimmed);
  if (byId) return [byId];
  const q = normaliseName(trimmed);
  if (q === '') return [];
  const names = (m: M) => [m.name, ...(m.aliases ?? [])].filter((n): n is string => typeof n === 'string');
  const exact = members.filter((m) => names(m).some((n) => normaliseName(n) === q));
  if (exact.length > 0) return exact;
  return members.filter((m) => {
    const name = typeof m.name === 'string' ? normaliseName(m.name) : '';
    return name !== '' && (name.startsWith(q) || name.endsWith(q));
  });
}

/**
 * Members a reference points to as a handler would resolve it: a sender alias (「自分」, "me") is the
 * sender, anything else goes through {@link matchMembers}.
 */
export function resolveMemberRef<M extends DirectoryMember>(
  ref: string,
  members: readonly M[],
  senderId?: string | null,
): M[] {
  if (isSenderAlias(ref) && senderId) return members.filter((m) => m.id === senderId);
  return matchMembers(ref, members);
}
