import type { ContextSource } from '../context-builder';
import { searchKnowledge, type KnowledgeHit } from '../knowledge/search';
import { sqlRunner } from '../../db/sql';
import { quoted } from '../quote';
import type { ContextSection } from '../types';

/** Passages put in the context for a message. */
export const KNOWLEDGE_CONTEXT_PASSAGES = 3;
/** Most characters of one passage shown in the context (passages are at most 500). */
const PASSAGE_QUOTE_MAX = 500;

/**
 * Context source "knowledge" (R-X4, seed 003 §5.1.2): the passages of the organisation's documents that best
 * match the message, each with its document title, as quoted data. Only a known member gets any, and only
 * what they may read (the search filters by reader before ranking). Not a SQL source: the reader's scope
 * needs the directory's departments first, so it runs beside the turn's combined read.
 */
export const knowledgeSource: ContextSource = {
  name: 'knowledge',
  async load({ db, sql, msg, sender, departments, hasKnowledge }) {
    if (!sender.known || !sender.memberId) return null;
    // An organisation without documents (most turns of most organisations) costs no search.
    if (hasKnowledge && !(await hasKnowledge(msg.orgId))) return null;
    const hits = await searchKnowledge(
      { db, sql: sql ?? sqlRunner(db), departments },
      {
        orgId: msg.orgId,
        reader: { known: sender.known, level: sender.level, departmentId: sender.departmentId },
        query: msg.text,
        limit: KNOWLEDGE_CONTEXT_PASSAGES,
      },
    );
    return renderKnowledge(hits);
  },
};

/** One line per passage: 文書「就業規則」 見出し「第3章 › 休暇」 本文「…」. */
export function renderKnowledge(hits: KnowledgeHit[]): ContextSection | null {
  if (hits.length === 0) return null;
  return {
    title: '社内文書の関連箇所 (knowledge; cite the document title when you use it)',
    lines: hits.map(
      (h) =>
        `文書${quoted(h.title, 100)}` +
        (h.heading ? ` 見出し${quoted(h.heading, 100)}` : '') +
        ` 本文${quoted(h.text, PASSAGE_QUOTE_MAX)}`,
    ),
  };
}
