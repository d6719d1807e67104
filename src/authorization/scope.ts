import type { Actor } from './actor';

/** A department as the scope computation needs it. */
export interface DepartmentNode {
  id: string;
  parentId: string | null;
  /** Marked top secret in the directory: it and its sub-departments are visible at level 6 only. */
  topSecret?: boolean;
}

/** The department columns the scope computation reads (a Prisma `select`). */
export const SCOPE_FIELDS = { id: true, parentId: true, topSecret: true } as const;

/** Lowest and highest valid sender levels (0 = public, conversation only; 6 = CEO/CFO). */
export const MIN_LEVEL = 0;
export const MAX_LEVEL = 6;

/** Level that sees top-secret departments (R-Z1: "everything"). */
export const TOP_SECRET_LEVEL = 6;

/**
 * Key in a visible-department set meaning "members without a department" (visible from level 5, like
 * the whole organisation). Never a real department id.
 */
export const NO_DEPARTMENT = '\u0000no-department';

/** True for an integer level in 0..6; anything else is treated as unknown (fail-closed). */
export function isValidLevel(level: unknown): level is number {
  return typeof level === 'number' && Number.isInteger(level) && level >= MIN_LEVEL && level <= MAX_LEVEL;
}

/**
 * Departments hidden from the actor as top secret: every department marked top secret, with its
 * descendants, except the subtree the actor belongs to. Empty at level 6.
 */
export function hiddenTopSecret(
  actor: Pick<Actor, 'level' | 'departmentId'>,
  departments: readonly DepartmentNode[],
): Set<string> {
  const hidden = new Set<string>();
  if (actor.level >= TOP_SECRET_LEVEL) return hidden;
  for (const d of departments) {
    if (d.topSecret !== true) continue;
    const subtree = descendants(d.id, departments, Infinity);
    if (actor.departmentId && subtree.has(actor.departmentId)) continue;
    for (const id of subtree) hidden.add(id);
  }
  return hidden;
}

/**
 * The departments whose data the actor may see (R-Z1, seed 003 §6.4):
 * level 1–2 own department; 3 own + direct children; 4 own + all descendants; 5 the whole organisation
 * except top secret; 6 `'ALL'`. Top-secret departments ({@link hiddenTopSecret}) are removed below level
 * 6; a set then holds {@link NO_DEPARTMENT} when members without a department are visible (level 5).
 * Level 0, an unknown level or a missing department gives an empty set. Pure; safe against cycles.
 */
export function visibleDepartments(
  actor: Pick<Actor, 'level' | 'departmentId'>,
  departments: readonly DepartmentNode[],
): Set<string> | 'ALL' {
  const { level, departmentId } = actor;
  if (!isValidLevel(level) || level === MIN_LEVEL) return new Set();
  const hidden = hiddenTopSecret(actor, departments);
  if (level >= 5) {
    if (hidden.size === 0) return 'ALL';
    return new Set([NO_DEPARTMENT, ...departments.map((d) => d.id).filter((id) => !hidden.has(id))]);
  }
  if (!departmentId) return new Set();
  const depth = level === 3 ? 1 : level === 4 ? Infinity : 0;
  const own = descendants(departmentId, departments, depth);
  for (const id of hidden) own.delete(id);
  return own;
}

/** True when `departmentId` is inside the visible set (null: a member without a department). */
export function isDepartmentVisible(visible: Set<string> | 'ALL', departmentId: string | null): boolean {
  if (visible === 'ALL') return true;
  return visible.has(departmentId ?? NO_DEPARTMENT);
}

/** `rootId` plus its descendants down to `maxDepth` levels (0 = only the root). Visits each node once. */
export function descendants(rootId: string, departments: readonly DepartmentNode[], maxDepth: number): Set<string> {
  const children = new Map<string, string[]>();
  for (const d of departments) {
    if (d.parentId === null || d.parentId === d.id) continue;
    const list = children.get(d.parentId);
    if (list) list.push(d.id);
    else children.set(d.parentId, [d.id]);
  }
  const seen = new Set<string>([rootId]);
  let frontier = [rootId];
  for (let depth = 0; depth < maxDepth && frontier.length > 0; depth++) {
    const next: string[] = [];
    for (const id of frontier) {
      for (const child of children.get(id) ?? []) {
        if (seen.has(child)) continue; // cycle or diamond: never revisit
        seen.add(child);
        next.push(child);
      }
    }
    frontier = next;
  }
  return seen;
}
