/**
 * Company knowledge (R-X4): searching the documents imported with `npm run knowledge:import`. Read-only; the
 * reader's level and department decide which documents are searched at all (src/authorization/knowledge-access.ts).
 */
import { z } from 'zod';
import { sqlRunner } from '../src/db/sql';
import { searchKnowledge } from '../src/context/knowledge/search';
import { defineTool } from '../src/tools/define-tool';
import { ToolError } from '../src/tools/types';
import { dbOf, requireSender } from './_people';

/** Most passages one search returns. */
export const KNOWLEDGE_SEARCH_LIMIT = 5;

/** `search_knowledge`: passages of the company's documents (就業規則, 手順書, FAQ …) with their titles. */
export const searchKnowledgeTool = defineTool({
  name: 'search_knowledge',
  description:
    "Search the company's documents (rules, procedures, FAQ) when the context's passages do not answer. " +
    `Up to ${KNOWLEDGE_SEARCH_LIMIT} passages with titles; cite the title you used.`,
  triggerExamples: [
    '経費精算の締め日はいつ？',
    '有給休暇は何日前に申請すればいい？',
    '社内FAQで VPN の設定を調べて',
    '就業規則ではどうなってる？',
    'What does the handbook say about remote work?',
  ],
  effects: [],
  risk: 'none',
  requiredLevel: 1,
  input: z.object({
    query: z.string().trim().min(1).max(200).describe('Key words, space-separated (e.g. 経費 申請 期限).'),
  }),
  output: z.object({
    passages: z.array(z.object({ title: z.string(), heading: z.string().nullable(), text: z.string() })),
  }),
  async handler(input, ctx) {
    const sender = requireSender(ctx);
    const db = dbOf(ctx);
    const hits = await searchKnowledge(
      { db, sql: sqlRunner(db) },
      {
        orgId: ctx.orgId,
        reader: { known: true, level: sender.level, departmentId: sender.departmentId },
        query: input.query,
        limit: KNOWLEDGE_SEARCH_LIMIT,
      },
    );
    if (hits.length === 0 && !/[\p{L}\p{N}]{2,}|[\p{Script=Han}\p{Script=Katakana}]/u.test(input.query)) {
      throw new ToolError('Search with one or more key words (not only particles).', 'EMPTY_QUERY');
    }
    return { passages: hits.map((h) => ({ title: h.title, heading: h.heading, text: h.text })) };
  },
});
