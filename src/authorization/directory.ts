import type { Db } from '../db/prisma';
import type { DepartmentNode } from './scope';

/** A member as the gate needs it to resolve and scope-check references. */
export interface DirectoryMember {
  id: string;
  departmentId: string | null;
  aliases?: readonly string[];
  name?: string;
}

/** The organisation directory the gate checks targets against (active members only). */
export interface Directory {
  departments: readonly DepartmentNode[];
  members: readonly DirectoryMember[];
}

/** Loads the departments and active members of one organisation. Errors propagate (fail-closed). */
export async function loadDirectory(db: Pick<Db, 'department' | 'member'>, orgId: string): Promise<Directory> {
  const [departments, members] = await Promise.all([
    db.department.findMany({ where: { orgId }, select: { id: true, parentId: true } }),
    db.member.findMany({
      where: { orgId, active: true },
      select: { id: true, departmentId: true, name: true, aliases: true },
    }),
  ]);
  return { departments, members };
}

/**
 * Members a reference points to: an exact member id first, otherwise every member whose name or alias
 * matches after normalisation (width, spaces, case, a trailing honorific such as さん). Empty = unknown.
 */
export function resolveMemberRef(ref: string, members: readonly DirectoryMember[]): DirectoryMember[] {
  const trimmed = ref.trim();
  if (trimmed === '') return [];
  const byId = members.find((m) => m.id === trimmed);
  if (byId) return [byId];
  const key = normalizeName(trimmed);
  if (key === '') return [];
  return members.filter((m) => [m.name, ...(m.aliases ?? [])].some((n) => typeof n === 'string' && normalizeName(n) === key));
}

const HONORIFIC = /(さん|さま|様|くん|君|ちゃん|氏|殿)$/u;

function normalizeName(s: string): string {
  return s.normalize('NFKC').replace(/\s+/gu, '').toLowerCase().replace(HONORIFIC, '');
}
