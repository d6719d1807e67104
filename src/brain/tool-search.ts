/**
 * Capabilities on demand (issue 39, decision record 0010): every request carries the few tools most turns need
 * ({@link CORE_TOOLS}, `reply`, `ask_clarification`) and {@link SEARCH_TOOL}; every other capability the sender
 * may use is sent with `defer_loading: true` and reaches the model only when `find_tools` returns a
 * `tool_reference` to it. The search is Hisho's own (client-side): BM25 over each tool's name, description,
 * trigger examples and parameters, with Japanese read as character bigrams, so 「来週の会議資料、山田さんにお願い」
 * finds `create_task`. The index takes a tool from any source (a registry declaration, later an MCP server's
 * tool) with the level it needs; a search never returns a tool above the sender's level or outside the tools
 * offered to them.
 */
import type { LlmMessage, LlmTool, LlmToolCall, LlmToolResult } from './llm-client';

/** The search tool's name (a reserved tool name: no capability may take it). */
export const SEARCH_TOOL = 'find_tools';

/**
 * The capabilities loaded in every member's request, chosen by measured use (the expected tools of the
 * evaluation set, decision record 0010) among those every member may use (level 1): the prefix must be
 * byte-identical for all senders of an organisation, and a sender is never offered a tool above his level.
 */
export const CORE_TOOLS: readonly string[] = ['create_reminder', 'create_schedule', 'lookup_person', 'save_memory'];

/** At most this many tools are loaded by one search (Anthropic's own search loads 3–5). */
export const SEARCH_LIMIT = 5;
/**
 * A hit scoring under this share of the best one is not loaded: every loaded definition is input the rest of the
 * turn pays for. Over the evaluation set (the case messages as queries) 0.4 loads 3.9 tools a search instead of 5
 * with the same recall (100 %); 0.6 missed 4 of 87 (decision record 0010).
 */
export const RELATIVE_FLOOR = 0.4;

/** A tool the index can find: what the model would read of it, its trigger examples, the level it needs. */
export interface SearchDocument {
  tool: LlmTool;
  /** Phrasings people use for it (Japanese first); searched, never sent. */
  examples: readonly string[];
  /** The level a sender needs to be offered the tool (1–6). */
  requiredLevel: number;
}

/** A search hit: the tool's name and its score (higher is better). */
export interface SearchHit {
  name: string;
  score: number;
}

/** The search tool's definition: part of the cached prefix (strict, one string). */
export function searchTool(): LlmTool {
  return SEARCH_DEFINITION;
}

const SEARCH_DEFINITION: LlmTool = {
  name: SEARCH_TOOL,
  description:
    'Find and load more tools: tasks for others and their changes (期限・担当・完了・取り消し), one-off and recurring ' +
    'reminders and schedules, memories, goals, announcements, people and the team, notice settings, company ' +
    'documents, background work. Query with the person’s own words or keywords (Japanese or English); the tools ' +
    'found are loaded for your next call.',
  strict: true,
  inputSchema: {
    type: 'object',
    properties: { query: { type: 'string' } },
    required: ['query'],
    additionalProperties: false,
  },
};

// ---- tokens ----------------------------------------------------------------------------------------------------

/** A run of Japanese (kanji, kana, 々, ー). */
const JA_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー々〆]+/gu;
/** A Latin word or number. */
const LATIN = /[a-z0-9]+/g;
/** English words that say nothing about which tool is meant. */
const STOP = new Set(
  'the an and or to of for in on at by with from as is are be it its this that my me you your can could please'.split(
    ' ',
  ),
);

/**
 * The search terms of a text: for each Japanese run its character bigrams (a one-character run: that character),
 * kanji and katakana also one by one; Latin words lower-cased, with a plural or -ing ending taken off, and the
 * words of a snake_case name.
 */
export function searchTerms(text: string): string[] {
  const s = text.normalize('NFKC').toLowerCase();
  const out: string[] = [];
  for (const run of s.match(JA_RUN) ?? []) {
    const chars = [...run];
    if (chars.length === 1) out.push(chars[0]!);
    for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
    for (const c of chars) if (/[\p{Script=Han}\p{Script=Katakana}]/u.test(c)) out.push(c);
  }
  for (const w of s.replace(/_/g, ' ').match(LATIN) ?? []) {
    if (w.length < 2 || STOP.has(w)) continue;
    out.push(w.length > 4 && w.endsWith('ing') ? w.slice(0, -3) : w.length > 3 && w.endsWith('s') ? w.slice(0, -1) : w);
  }
  return out;
}

// ---- index -----------------------------------------------------------------------------------------------------

/** How much a term found in each part of a tool counts (its name says most, its parameters least). */
const WEIGHTS = { name: 3, examples: 2, description: 1, parameters: 0.5 } as const;
const K1 = 1.2;
const B = 0.75;

interface Indexed {
  doc: SearchDocument;
  /** Weighted term frequencies. */
  tf: Map<string, number>;
  length: number;
  /** Other tools its definition names (「by its id (from list_reminders)」): found with it. */
  uses: string[];
}

/** The words of a JSON schema a model would search by: parameter names, descriptions and enum values. */
function schemaText(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) schemaText(n, out);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'properties' && v && typeof v === 'object') out.push(...Object.keys(v));
      if (k === 'description' && typeof v === 'string') out.push(v);
      if (k === 'enum' && Array.isArray(v)) out.push(...v.filter((x): x is string => typeof x === 'string'));
      schemaText(v, out);
    }
  }
  return out;
}

/**
 * BM25 over tools (weighted fields). Tools may be added at any time (an MCP server connecting); a tool added
 * again under the same name replaces the earlier one.
 */
export class ToolIndex {
  private readonly docs = new Map<string, Indexed>();
  private df = new Map<string, number>();
  private avgLength = 1;

  constructor(docs: readonly SearchDocument[] = []) {
    for (const d of docs) this.put(d);
    this.refresh();
  }

  /** Adds (or replaces) a tool. */
  add(doc: SearchDocument): void {
    this.put(doc);
    this.refresh();
  }

  get size(): number {
    return this.docs.size;
  }

  /**
   * The tools that best match `query`, best first, at most `limit`: only tools within `level` and, when given,
   * among `allowed` (the tools offered to the sender), none scoring under {@link RELATIVE_FLOOR} of the best. A
   * tool whose definition names another one it needs (cancel_reminder takes an id from list_reminders) brings that
   * one along, right after it. Tools that share no term with the query are not returned.
   */
  search(query: string, o: { level: number; allowed?: ReadonlySet<string>; limit?: number }): SearchHit[] {
    const open = (name: string) => {
      const d = this.docs.get(name);
      return d !== undefined && d.doc.requiredLevel <= o.level && (!o.allowed || o.allowed.has(name));
    };
    const ranked = this.rank(query, open);
    const limit = o.limit ?? SEARCH_LIMIT;
    const out: SearchHit[] = [];
    const taken = new Set<string>();
    const floor = (ranked[0]?.score ?? 0) * RELATIVE_FLOOR;
    for (const hit of ranked) {
      if (out.length >= limit || hit.score < floor) break;
      if (taken.has(hit.name)) continue;
      out.push(hit);
      taken.add(hit.name);
      for (const used of this.docs.get(hit.name)!.uses) {
        if (out.length >= limit || taken.has(used) || !open(used)) continue;
        out.push({ name: used, score: hit.score });
        taken.add(used);
      }
    }
    return out;
  }

  private rank(query: string, open: (name: string) => boolean): SearchHit[] {
    const terms = [...new Set(searchTerms(query))];
    const n = this.docs.size;
    const hits: SearchHit[] = [];
    for (const [name, d] of this.docs) {
      if (!open(name)) continue;
      let score = 0;
      for (const t of terms) {
        const f = d.tf.get(t);
        if (!f) continue;
        const df = this.df.get(t) ?? 0;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        score += (idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * d.length) / this.avgLength));
      }
      if (score > 0) hits.push({ name, score });
    }
    return hits.sort((a, b) => b.score - a.score || a.name.localeCompare(b.name));
  }

  private put(doc: SearchDocument): void {
    const tf = new Map<string, number>();
    let length = 0;
    const field = (text: string, weight: number) => {
      for (const t of searchTerms(text)) {
        tf.set(t, (tf.get(t) ?? 0) + weight);
        length += weight;
      }
    };
    field(doc.tool.name, WEIGHTS.name);
    for (const e of doc.examples) field(e, WEIGHTS.examples);
    field(doc.tool.description, WEIGHTS.description);
    field(schemaText(doc.tool.inputSchema).join(' '), WEIGHTS.parameters);
    this.docs.set(doc.tool.name, { doc, tf, length, uses: [] });
  }

  private refresh(): void {
    const df = new Map<string, number>();
    let total = 0;
    for (const d of this.docs.values()) {
      total += d.length;
      for (const t of d.tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
    }
    this.df = df;
    this.avgLength = this.docs.size > 0 ? total / this.docs.size : 1;
    for (const [name, d] of this.docs) {
      const text = `${d.doc.tool.description} ${schemaText(d.doc.tool.inputSchema).join(' ')}`;
      d.uses = [...this.docs.keys()].filter((other) => other !== name && new RegExp(`\\b${other}\\b`).test(text));
    }
  }
}

// ---- the search round trip -------------------------------------------------------------------------------------

/** At most this many searches in one decision; one more fails closed. */
export const MAX_SEARCHES = 3;

/** One search of a decision: what the model asked for and what it loaded (for the turn record and the eval). */
export interface SearchRecord {
  query: string;
  found: string[];
}

/**
 * The results of an answer that searches: each `find_tools` call answered with the tools it loads (or a note that
 * nothing matched); any other call of the same answer is not run and the model is told so.
 */
export function searchResults(
  calls: readonly LlmToolCall[],
  index: ToolIndex | null,
  level: number,
): { results: LlmToolResult[]; searches: SearchRecord[] } {
  const results: LlmToolResult[] = [];
  const searches: SearchRecord[] = [];
  for (const c of calls) {
    if (c.name !== SEARCH_TOOL) {
      results.push({
        type: 'tool_result',
        callId: c.id,
        content: 'Not run: it came with a tool search. Call it again if it is still needed.',
        isError: true,
      });
      continue;
    }
    const raw = (c.input as { query?: unknown } | null)?.query;
    const query = typeof raw === 'string' ? raw.slice(0, 500) : '';
    const found = index?.search(query, { level }).map((h) => h.name) ?? [];
    searches.push({ query, found });
    results.push(
      found.length > 0
        ? { type: 'tool_result', callId: c.id, content: `Loaded: ${found.join(', ')}`, loads: found }
        : {
            type: 'tool_result',
            callId: c.id,
            content: 'No tool matches. Try other words, or answer with what you can do.',
          },
    );
  }
  return { results, searches };
}

/** The deferred tools a turn has loaded so far (the tool searches answered in its messages). */
export function loadedTools(messages: readonly LlmMessage[]): Set<string> {
  const out = new Set<string>();
  for (const m of messages)
    if (typeof m.content !== 'string')
      for (const p of m.content) if (p.type === 'tool_result') for (const n of p.loads ?? []) out.add(n);
  return out;
}
