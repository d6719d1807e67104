import type { ToolMeta } from '../core/tool-meta';
import type { Actor } from './actor';
import { confirmBy, deny, type AuthDecision, type DenyReasonCode } from './decision';
import { resolveMemberRef, type Directory, type DirectoryMember } from './directory';
import {
  mostPermissive,
  ORGANISATION_WIDE,
  outcomeAt,
  PERSON_ROLES,
  personOutcome,
  TASK_ROLES,
  type Outcome,
  type PersonRole,
  type Relation,
} from './person-scope';
import { hiddenTopSecret, isDepartmentVisible, visibleDepartments } from './scope';

/** Parameter roles the gate checks against the directory: every person role, and departments. */
export type CheckedRole = PersonRole | 'target_department';

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

const CHECKED: ReadonlySet<string> = new Set<string>([...PERSON_ROLES, 'target_department']);

/** True for a parameter role that names a person (the Guardian rewrites 「自分」 in these too). */
export function isPersonRole(role: string): role is PersonRole {
  return (PERSON_ROLES as readonly string[]).includes(role);
}

/** The proposal's parameters that need a directory check (absent / null values are skipped). */
export function checkedParams(tool: Pick<ToolMeta, 'paramRoles'>, parameters: Record<string, unknown>): CheckedParam[] {
  const out: CheckedParam[] = [];
  const roles = tool.paramRoles ?? {};
  const present = (name: string): boolean =>
    Object.prototype.hasOwnProperty.call(parameters, name) &&
    parameters[name] !== undefined &&
    parameters[name] !== null;
  for (const [param, role] of Object.entries(roles)) {
    if (CHECKED.has(role) && present(param)) out.push({ param, role: role as CheckedRole, value: parameters[param] });
  }
  for (const [param, role] of Object.entries(CONVENTIONAL_ROLES)) {
    if (!Object.prototype.hasOwnProperty.call(roles, param) && present(param))
      out.push({ param, role, value: parameters[param] });
  }
  return out;
}

/** Task ids named by `task` parameters (their owners are loaded before the gate decides). */
export function referencedTaskIds(tool: Pick<ToolMeta, 'paramRoles'>, parameters: Record<string, unknown>): string[] {
  return checkedParams(tool, parameters)
    .filter((p) => TASK_ROLES.includes(p.role as PersonRole))
    .flatMap((p) => (Array.isArray(p.value) ? p.value : [p.value]))
    .filter((v): v is string => typeof v === 'string')
    .map((v) => v.trim());
}

/** A member reference: `id` must be an exact member id; `text` may also be a name, alias or 「自分」. */
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

/** What the gate knows about the actor's scope, computed once per decision. */
interface Scope {
  actor: Actor;
  visible: Set<string> | 'ALL';
  hidden: Set<string>;
  directory: Directory;
}

function relationOf(scope: Scope, member: DirectoryMember): Relation {
  if (member.id === scope.actor.memberId) return 'self';
  if (member.departmentId !== null && scope.hidden.has(member.departmentId)) return 'top_secret';
  return isDepartmentVisible(scope.visible, member.departmentId) ? 'in_scope' : 'out_of_scope';
}

/**
 * Who a task parameter touches. `task` (completing): the sender's own task (assignee or creator), else its
 * assignee. `task_change` (changing or cancelling): the sender's own only when they are its assignee — a task
 * they gave someone else is that person's, so changing it is asked first.
 */
function taskRelation(scope: Scope, role: PersonRole, taskId: string): Relation {
  const task = scope.directory.tasks?.get(taskId);
  if (!task) return 'unknown';
  const me = scope.actor.memberId;
  const mine = task.assigneeMemberId === me || (role === 'task' && task.createdByMemberId === me);
  if (me !== null && mine) return 'self';
  const assignee = scope.directory.members.find((m) => m.id === task.assigneeMemberId);
  return assignee ? relationOf(scope, assignee) : 'unknown';
}

/** One judged reference: its outcome and, for the audit reason, the relation that decided it. */
interface Judged {
  outcome: Outcome;
  relation: Relation;
}

/**
 * The outcome for one reference. A name that fits several members is judged for each: if any of them
 * may be touched the handler asks which one is meant (it touches nobody until one is named, and the
 * named one is checked again); if none may, it is denied.
 */
function judgeRef(scope: Scope, role: PersonRole, ref: MemberRef): Judged {
  const level = scope.actor.level;
  if (TASK_ROLES.includes(role)) {
    const relation = taskRelation(scope, role, ref.value.trim());
    return { outcome: personOutcome(role, relation, level), relation };
  }
  const members = scope.directory.members;
  const matches =
    ref.kind === 'id'
      ? members.filter((m) => m.id === ref.value.trim())
      : resolveMemberRef(ref.value, members, scope.actor.memberId);
  if (matches.length === 0) return { outcome: personOutcome(role, 'unknown', level), relation: 'unknown' };
  const judged = matches.map((m) => {
    const relation = relationOf(scope, m);
    return { outcome: personOutcome(role, relation, level), relation };
  });
  const outcome = mostPermissive(judged.map((j) => j.outcome));
  return judged.find((j) => j.outcome === outcome) ?? judged[0]!;
}

const DENY_CODES: Record<Relation, DenyReasonCode> = {
  self: 'Z_LEVEL_TOO_LOW',
  in_scope: 'Z_LEVEL_TOO_LOW',
  out_of_scope: 'Z_OUT_OF_SCOPE_USER',
  top_secret: 'Z_TOP_SECRET',
  unknown: 'Z_UNKNOWN_TARGET',
};

/** Checks a `target_department` value: known, not top secret, in scope. */
function checkDepartment(scope: Scope, param: string, value: unknown): AuthDecision | null {
  const known = new Set(scope.directory.departments.map((d) => d.id));
  for (const raw of Array.isArray(value) ? value : [value]) {
    const id = typeof raw === 'string' ? raw.trim() : null;
    if (id === null || !known.has(id)) {
      return deny('Z_UNKNOWN_TARGET', `parameter "${param}" names a department that is not in the directory`);
    }
    if (scope.hidden.has(id)) return deny('Z_TOP_SECRET', `parameter "${param}": department ${id} is top secret`);
    if (!isDepartmentVisible(scope.visible, id)) {
      const why = `parameter "${param}": department ${id} is outside the scope of level ${scope.actor.level}`;
      return deny('Z_OUT_OF_SCOPE_DEPARTMENT', why);
    }
  }
  return null;
}

/**
 * Checks every person and department parameter against the sender's data scope with the outcome table
 * (person-scope.ts), plus the organisation-wide rule. Returns the first denial; otherwise a CONFIRM when
 * any parameter needs one; otherwise null (all allowed).
 */
export function checkTargets(
  actor: Actor,
  tool: Pick<ToolMeta, 'paramRoles' | 'organisationWide'>,
  parameters: Record<string, unknown>,
  directory: Directory,
): AuthDecision | null {
  const { departments } = directory;
  const visible = visibleDepartments(actor, departments);
  const scope: Scope = { actor, directory, visible, hidden: hiddenTopSecret(actor, departments) };
  let confirm: AuthDecision | null = null;
  for (const { param, role, value } of checkedParams(tool, parameters)) {
    if (role === 'target_department') {
      const denial = checkDepartment(scope, param, value);
      if (denial) return denial;
      continue;
    }
    if (role === 'recipients' && typeof value === 'string' && value.trim().toLowerCase() === 'all') continue;
    const refs = memberRefs(value);
    if (refs === null) return deny('Z_UNKNOWN_TARGET', `parameter "${param}" has a value the gate cannot resolve`);
    for (const ref of refs) {
      const { outcome, relation } = judgeRef(scope, role, ref);
      const why = `parameter "${param}" (${role}) names a person who is ${relation} for level ${actor.level}`;
      if (outcome === 'deny') return deny(DENY_CODES[relation], why);
      if (outcome === 'confirm') confirm ??= confirmBy('Z_CONFIRM_PERSON', why);
    }
  }
  if (tool.organisationWide?.(parameters) === true) {
    const outcome = outcomeAt(ORGANISATION_WIDE, actor.level);
    const why = `the call speaks for the whole organisation; level ${actor.level}`;
    if (outcome === 'deny') return deny('Z_LEVEL_TOO_LOW', why);
    if (outcome === 'confirm') confirm ??= confirmBy('Z_CONFIRM_ORG_WIDE', why);
  }
  return confirm;
}
