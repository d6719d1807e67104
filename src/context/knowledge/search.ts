import { knowledgeReaderScope, type KnowledgeReader } from '../../authorization/knowledge-access';
import { SCOPE_FIELDS, type DepartmentNode } from '../../authorization/scope';
import type { Db } from '../../db/prisma';
import type { Sql } from '../../db/sql';
import { searchWords } from './tokens';

/** One passage found for a reader. */
export interface KnowledgeHit {
  documentId: string;
  title: string;
  heading: string | null;
  text: string;
  /** How many of the query's words the passage contains. */
  wordsMatched: number;
  /** How many of the query's tokens it contains (ties between equal word counts). */
  tokensMatched: number;
}

export interface SearchInput {
  orgId: string;
  reader: KnowledgeReader;
  query: string;
  limit: number;
  /** Only passages that contain at least this many of the query's words (default 1). */
  minWords?: number;
}

/** Most words of one query that are searched (a long message is cut, not refused). */
const MAX_WORDS = 24;

/**
 * Passages for a query, best first, filtered by the reader BEFORE ranking (R-X4): the reader's scope
 * ({@link knowledgeReaderScope}) becomes the statement's WHERE clause, so a passage of a document they
 * may not read is never selected. Ranking: passages containing more of the query's words first, then more
 * of its tokens, then shorter passages. Reads the organisation's departments, then the passages.
 */
export async function searchKnowledge(
  deps: { db: Db; sql: Sql; departments?: (orgId: string) => Promise<readonly DepartmentNode[]> },
  input: SearchInput,
): Promise<KnowledgeHit[]> {
  const words = focusWords(searchWords(input.query)).slice(0, MAX_WORDS);
  if (words.length === 0 || input.limit <= 0) return [];
  if (!input.reader.known) return [];
  // The directory cache's departments when the caller has it (a turn), else one read.
  const departments: readonly DepartmentNode[] = deps.departments
    ? await deps.departments(input.orgId)
    : await deps.db.department.findMany({ where: { orgId: input.orgId }, select: SCOPE_FIELDS });
  const scope = knowledgeReaderScope(input.reader, departments);
  if (!scope) return [];
  const tokens = [...new Set(words.flat())];
  const rows = await deps.sql<KnowledgeHit>(
    `SELECT * FROM (
       SELECT d.id AS "documentId", d.title, p.heading, p.text, p.ordinal,
         (SELECT count(*) FROM jsonb_array_elements($3::jsonb) w
           WHERE p.tokens @> ARRAY(SELECT jsonb_array_elements_text(w)))::int AS "wordsMatched",
         (SELECT count(*) FROM unnest(p.tokens) t WHERE t = ANY($2::text[]))::int AS "tokensMatched"
       FROM knowledge_passages p JOIN knowledge_documents d ON d.id = p."documentId"
       WHERE d."orgId" = $1 AND p.tokens && $2::text[]
         AND d.level <= $4
         AND (d."departmentId" IS NULL OR $5::boolean OR d."departmentId" = ANY($6::text[]))
     ) hit
     WHERE "wordsMatched" >= $7
     ORDER BY "wordsMatched" DESC, "tokensMatched" DESC, length(text), title, ordinal
     LIMIT $8`,
    [
      input.orgId,
      tokens,
      JSON.stringify(words),
      scope.maxLevel,
      scope.departments === 'ALL',
      scope.departments === 'ALL' ? [] : scope.departments,
      Math.max(1, input.minWords ?? 1),
      input.limit,
    ],
  );
  return rows.map((r) => ({
    documentId: r.documentId,
    title: r.title,
    heading: r.heading,
    text: r.text,
    wordsMatched: r.wordsMatched,
    tokensMatched: r.tokensMatched,
  }));
}

/**
 * Single characters (「日」 in 「何日」 is a word of its own after hiragana) match far too much: when the query
 * has longer words, only those are searched; a query of single characters (「締め切り」) keeps them.
 */
export function focusWords(words: string[][]): string[][] {
  const long = words.filter((w) => w.length > 1 || [...w[0]!].length > 1);
  return long.length > 0 ? long : words;
}
