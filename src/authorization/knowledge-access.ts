import type { Actor } from './actor';
import { descendants, isValidLevel, MIN_LEVEL, visibleDepartments, type DepartmentNode } from './scope';

/**
 * Who may read a knowledge document (R-X4) — the one rule, used by the context source and the
 * `search_knowledge` tool through the search's SQL filter (a passage the reader may not read never leaves
 * the database for them):
 * - the reader is a known member and their level is at least the document's level (1–6);
 * - a document restricted to a department is readable where that department is the reader's own or one
 *   it belongs to (a parent: a 営業部 document is for 東京営業課 too), or inside the reader's data scope
 *   (R-Z1, {@link visibleDepartments}: managers above it, level 5 everything but top secret, level 6 all).
 */
export interface KnowledgeReaderScope {
  /** Highest document level the reader may read. */
  maxLevel: number;
  /** Departments whose restricted documents the reader may read (`ALL` at level 6 / no top secret). */
  departments: 'ALL' | string[];
}

export type KnowledgeReader = Pick<Actor, 'known' | 'level' | 'departmentId'>;

/** The reader's scope, or null when they may read no document at all (unknown, public, invalid level). */
export function knowledgeReaderScope(
  reader: KnowledgeReader,
  departments: readonly DepartmentNode[],
): KnowledgeReaderScope | null {
  if (!reader.known || !isValidLevel(reader.level) || reader.level === MIN_LEVEL) return null;
  const visible = visibleDepartments(reader, departments);
  if (visible === 'ALL') return { maxLevel: reader.level, departments: 'ALL' };
  const readable = new Set(visible);
  if (reader.departmentId) {
    for (const d of departments) {
      if (descendants(d.id, departments, Infinity).has(reader.departmentId)) readable.add(d.id);
    }
  }
  return { maxLevel: reader.level, departments: [...readable].sort() };
}

/** The same rule for one document (tests, and anything that holds a document in memory). */
export function mayReadKnowledge(
  reader: KnowledgeReader,
  doc: { level: number; departmentId: string | null },
  departments: readonly DepartmentNode[],
): boolean {
  const scope = knowledgeReaderScope(reader, departments);
  if (!scope || doc.level > scope.maxLevel) return false;
  return doc.departmentId === null || scope.departments === 'ALL' || scope.departments.includes(doc.departmentId);
}
