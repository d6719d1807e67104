import type { Db } from '../db/prisma';
import { isSenderAlias } from '../guardian/param-values';
import { matchMembers, type NamedMember } from './names';
import { SCOPE_FIELDS, type DepartmentNode } from './scope';

/** A member as the gate needs it to resolve and scope-check references. */
export interface DirectoryMember extends NamedMember {
  departmentId: string | null;
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
  departments: readonly (DepartmentNode & {
    name?: string;
    aliases?: readonly string[];
    handles?: readonly string[];
  })[];
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
    db.department.findMany({ where: { orgId }, select: { ...SCOPE_FIELDS, name: true, aliases: true, handles: true } }),
    db.member.findMany({
      where: { orgId, active: true },
      select: {
        id: true,
        departmentId: true,
        name: true,
        aliases: true,
        reading: true,
        romaji: true,
        dictionaryReading: true,
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

export { HONORIFICS, matchMembers, normaliseName, plainName } from './names';

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
