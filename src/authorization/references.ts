/**
 * The people and departments a proposal names, read against the directory before the Guardian and the Gate decide
 * (issue 40). Department names and aliases become department ids (what the Gate checks and the handlers store);
 * a name that fits no member or department is reported with the near matches the sender may see, so the model asks
 * who or which is meant instead of hearing of a permission the person does not lack. Pure.
 */
import type { ToolMeta } from '../core/tool-meta';
import { isAllWord, isSenderAlias } from '../guardian/param-values';
import type { Actor } from './actor';
import type { Directory, DirectoryMember } from './directory';
import { matchDepartments, matchMembers, nearDepartments, nearMembers } from './names';
import { TASK_ROLES, type PersonRole } from './person-scope';
import { hiddenTopSecret } from './scope';
import { checkedParams } from './targets';

/** A reference the directory does not know (or, for a department, knows several of). */
export interface UnresolvedReference {
  kind: 'person' | 'department';
  param: string;
  /** As the model wrote it. */
  ref: string;
  /** What the sender may have meant, as the model can pass it back: 「佐藤美咲（id: sato-misaki、管理部）」. */
  near: string[];
  /** True when several departments fit (the near list is them). */
  ambiguous?: boolean;
}

/** A proposal's references as the directory reads them. */
export interface ResolvedReferences {
  /** The parameters with department names and aliases replaced by department ids. */
  parameters: Record<string, unknown>;
  /** References that name nobody (or several departments): nothing is decided or run for this call. */
  unresolved: UnresolvedReference[];
  /**
   * Whether the call names anyone besides the sender: another member (or a name that fits several or
   * nobody), a department, everyone, or a task of someone else. What the Guardian's confidentiality rule reads.
   */
  namesOthers: boolean;
}

/**
 * Reads the person and department parameters of a call (the same ones the Gate checks) against the directory.
 * Members and departments hidden from the sender (top secret below level 6) do not exist for them: a name that fits
 * only hidden ones gets the same answer as a name nobody has, and they are never offered as near matches.
 */
export function resolveReferences(
  tool: Pick<ToolMeta, 'paramRoles'> | undefined,
  parameters: Record<string, unknown>,
  directory: Directory,
  actor: Pick<Actor, 'memberId' | 'level' | 'departmentId'>,
): ResolvedReferences {
  const out: ResolvedReferences = { parameters: { ...parameters }, unresolved: [], namesOthers: false };
  if (!tool) return out;
  const hidden = hiddenTopSecret(actor, directory.departments);
  const deptName = new Map(directory.departments.map((d) => [d.id, d.name ?? d.id]));
  const visibleMembers = directory.members.filter((m) => m.departmentId === null || !hidden.has(m.departmentId));
  const visibleDepts = directory.departments.filter((d) => !hidden.has(d.id));
  const memberLabel = (m: DirectoryMember) => {
    const dept = m.departmentId ? deptName.get(m.departmentId) : undefined;
    return `${m.name ?? m.id}（id: ${m.id}${dept ? `、${dept}` : ''}）`;
  };
  const deptLabel = (d: { id: string; name?: string }) => `${d.name ?? d.id}（id: ${d.id}）`;

  for (const { param, role, value } of checkedParams(tool, parameters)) {
    if (role === 'target_department') {
      out.namesOthers = true;
      const items = Array.isArray(value) ? value : [value];
      const ids: unknown[] = [];
      for (const raw of items) {
        if (typeof raw !== 'string') {
          ids.push(raw);
          continue;
        }
        // A department hidden from the sender (top secret) does not exist for them (R-Z1, R-Z3).
        const found = matchDepartments(raw, visibleDepts);
        if (found.length === 1) ids.push(found[0]!.id);
        else if (found.length === 0) {
          const near = nearDepartments(raw, visibleDepts).map(deptLabel);
          out.unresolved.push({ kind: 'department', param, ref: raw, near });
          ids.push(raw);
        } else {
          const near = found.map(deptLabel);
          out.unresolved.push({ kind: 'department', param, ref: raw, near, ambiguous: true });
          ids.push(raw);
        }
      }
      out.parameters[param] = Array.isArray(value) ? ids : ids[0];
      continue;
    }
    if (TASK_ROLES.includes(role as PersonRole)) {
      const task = typeof value === 'string' ? directory.tasks?.get(value.trim()) : undefined;
      if (!task || task.assigneeMemberId !== actor.memberId) out.namesOthers = true;
      continue;
    }
    if (role === 'recipients' && isAllWord(value)) {
      out.namesOthers = true; // everyone: what the Guardian and the Gate decide on
      continue;
    }
    for (const item of Array.isArray(value) ? value : [value]) {
      const o = item && typeof item === 'object' ? (item as Record<string, unknown>) : null;
      const id = o ? (typeof o.memberId === 'string' ? o.memberId : typeof o.id === 'string' ? o.id : null) : null;
      if (typeof item !== 'string' && id === null) {
        out.namesOthers = true; // a shape the Gate refuses
        continue;
      }
      const ref = typeof item === 'string' ? item : id!;
      if (typeof item === 'string' && isSenderAlias(ref)) continue;
      // Members the sender may not see (top secret) do not exist for them: the same answer as a name nobody has.
      const matches =
        typeof item === 'string'
          ? matchMembers(ref, visibleMembers)
          : visibleMembers.filter((m) => m.id === ref.trim());
      if (matches.length === 1 && matches[0]!.id === actor.memberId) continue;
      out.namesOthers = true;
      if (matches.length > 0) continue;
      const near = nearMembers(ref, visibleMembers).map(memberLabel);
      out.unresolved.push({ kind: 'person', param, ref, near });
    }
  }
  return out;
}

/**
 * The confidential topics that are the sender's work (issue 40): what the directory's `handles:` lists for their
 * department and the departments above it.
 */
export function handledTopics(actor: Pick<Actor, 'departmentId'>, directory: Pick<Directory, 'departments'>): string[] {
  const byId = new Map(directory.departments.map((d) => [d.id, d]));
  const topics = new Set<string>();
  const seen = new Set<string>();
  for (let id = actor.departmentId; id !== null && !seen.has(id);) {
    seen.add(id);
    const d = byId.get(id);
    if (!d) break;
    for (const t of d.handles ?? []) topics.add(t);
    id = d.parentId;
  }
  return [...topics];
}
