import type { Actor } from './actor';

/** A department as the scope computation needs it. */
export interface DepartmentNode {
  id: string;
  parentId: string | null;
}

/** Lowest and highest valid sender levels (0 = public, conversation only; 6 = CEO/CFO). */
export const MIN_LEVEL = 0;
export const MAX_LEVEL = 6;

/** True for an integer level in 0..6; anything else is treated as unknown (fail-closed). */
export function isValidLevel(level: unknown): level is number {
  return typeof level === 'number' && Number.isInteger(level) && level >= MIN_LEVEL && level <= MAX_LEVEL;
}

/**
 * The departments whose data the actor may see (R-Z1, seed 003 §6.4):
 * level 1–2 own department; 3 own + direct children; 4 own + all descendants; 5 and 6 `'ALL'`
 * (level 5 still excludes top-secret data, which the gate checks separately). Level 0, an unknown level
 * or a missing department gives an empty set. Pure; safe against cycles in `parentId`.
 */
export function visibleDepartments(
  actor: Pick<Actor, 'level' | 'departmentId'>,
  departments: readonly DepartmentNode[],
): Set<string> | 'ALL' {
  const { level, departmentId } = actor;
  if (!isValidLevel(level) || level === MIN_LEVEL) return new Set();
  if (level >= 5) return 'ALL';
  if (!departmentId) return new Set();
  const depth = level === 3 ? 1 : level === 4 ? Infinity : 0;
  return descendants(departmentId, departments, depth);
}

/** True when `departmentId` is inside the visible set. */
export function isDepartmentVisible(visible: Set<string> | 'ALL', departmentId: string | null): boolean {
  if (visible === 'ALL') return true;
  return departmentId !== null && visible.has(departmentId);
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
