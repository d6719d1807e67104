import type { ToolMeta } from '../tools/types';
import type { Actor } from './actor';
import { deny, type AuthDecision } from './decision';
import { resolveMemberRef, type Directory } from './directory';
import { isDepartmentVisible, visibleDepartments } from './scope';

/** Parameter roles the gate checks against the directory. */
export type CheckedRole = 'target_user' | 'target_department' | 'recipients';

/** One parameter value the gate must check. */
export interface CheckedParam {
  param: string;
  role: CheckedRole;
  value: unknown;
}

/**
 * Parameter names treated as scope targets even when a tool forgot to declare them in `paramRoles`
 * (the names the seed uses). Declared roles always win.
 */
const CONVENTIONAL_ROLES: Readonly<Record<string, CheckedRole>> = {
  target_user: 'target_user',
  target_user_id: 'target_user',
  target_user_ids: 'target_user',
  target_member_id: 'target_user',
  target_department: 'target_department',
  target_department_id: 'target_department',
  target_department_ids: 'target_department',
};

const CHECKED: ReadonlySet<string> = new Set<CheckedRole>(['target_user', 'target_department', 'recipients']);

/** The proposal's parameters that need a directory check (absent / null values are skipped). */
export function checkedParams(tool: Pick<ToolMeta, 'paramRoles'>, parameters: Record<string, unknown>): CheckedParam[] {
  const out: CheckedParam[] = [];
  const roles = tool.paramRoles ?? {};
  const present = (name: string): boolean =>
    Object.prototype.hasOwnProperty.call(parameters, name) && parameters[name] !== undefined && parameters[name] !== null;
  for (const [param, role] of Object.entries(roles)) {
    if (CHECKED.has(role) && present(param)) out.push({ param, role: role as CheckedRole, value: parameters[param] });
  }
  for (const [param, role] of Object.entries(CONVENTIONAL_ROLES)) {
    if (!Object.prototype.hasOwnProperty.call(roles, param) && present(param)) out.push({ param, role, value: parameters[param] });
  }
  return out;
}

/** A member reference: `id` must be an exact member id; `text` may also be a name or alias. */
type MemberRef = { kind: 'id' | 'text'; value: string };

/** Splits a parameter value into member references; null when its shape is not understood. */
function memberRefs(value: unknown): MemberRef[] | null {
  const items = Array.isArray(value) ? value : [value];
  const refs: MemberRef[] = [];
  for (const item of items) {
    if (typeof item === 'string') refs.push({ kind: 'text', value: item });
    else if (item && typeof item === 'object') {
      const o = item as Record<string, unknown>;
      const id = typeof o.memberId === 'string' ? o.memberId : typeof o.id === 'string' ? o.id : null;
      if (id === null) return null;
      refs.push({ kind: 'id', value: id });
    } else return null;
  }
  return refs;
}

/** An ASCII token without spaces is read as a member id, not as a natural-language name. */
const ID_LIKE = /^[\x21-\x7e]+$/;

/**
 * Checks every scoped parameter. `target_user` / `target_department` must exist and be in the actor's
 * department scope (the actor themself is always in scope). `recipients` are not scope-checked, but a
 * recipient given as a member id (an object `{memberId}`/`{id}` or an ASCII token) must be a known member;
 * natural-language names that do not resolve are left to the handler's resolver. Returns the first
 * denial, or null when all pass.
 */
export function checkTargets(actor: Actor, params: readonly CheckedParam[], directory: Directory): AuthDecision | null {
  const visible = visibleDepartments(actor, directory.departments);
  const knownDepartments = new Set(directory.departments.map((d) => d.id));
  for (const { param, role, value } of params) {
    if (role === 'target_department') {
      const ids = Array.isArray(value) ? value : [value];
      for (const id of ids) {
        if (typeof id !== 'string' || !knownDepartments.has(id.trim())) {
          return deny('Z_UNKNOWN_TARGET', `parameter "${param}" names a department that is not in the directory`);
        }
        if (!isDepartmentVisible(visible, id.trim())) {
          return deny('Z_OUT_OF_SCOPE_DEPARTMENT', `parameter "${param}": department ${id.trim()} is outside the scope of level ${actor.level}`);
        }
      }
      continue;
    }
    if (role === 'recipients' && typeof value === 'string' && value.trim().toLowerCase() === 'all') continue;
    const refs = memberRefs(value);
    if (refs === null) return deny('Z_UNKNOWN_TARGET', `parameter "${param}" has a value the gate cannot resolve`);
    for (const ref of refs) {
      const matches = ref.kind === 'id'
        ? directory.members.filter((m) => m.id === ref.value.trim())
        : resolveMemberRef(ref.value, directory.members);
      if (matches.length === 0) {
        if (role === 'recipients' && ref.kind === 'text' && !ID_LIKE.test(ref.value.trim())) continue;
        return deny('Z_UNKNOWN_TARGET', `parameter "${param}" names a member that is not in the directory`);
      }
      if (role !== 'target_user') continue;
      const outside = matches.find((m) => m.id !== actor.memberId && !isDepartmentVisible(visible, m.departmentId));
      if (outside) {
        return deny('Z_OUT_OF_SCOPE_USER', `parameter "${param}": member ${outside.id} is outside the scope of level ${actor.level}`);
      }
    }
  }
  return null;
}
