/**
 * The tool search offline (issue 39): for a case whose expected tool is deferred for its sender (not loaded in
 * every request, found with `find_tools`), does the search the service runs find it among the tools one search
 * loads, when queried with the case's message as the person wrote it? The same tool set, index and sender level
 * as the service's request for that case (world.ts builds the brain input with the service's functions).
 */
import { toolSet } from '../src/brain/request';
import { SEARCH_LIMIT } from '../src/brain/tool-search';
import type { EvalCase } from './cases';
import type { PreparedCase } from './world';

/** One case's search: null when its expected tool is loaded anyway (or it expects no tool). */
export interface CaseSearch {
  id: string;
  tool: string;
  found: boolean;
  /** What the search loaded, best first. */
  got: string[];
}

/** The search for one case's message, when its expected tool is deferred for its sender. */
export function caseSearch(c: EvalCase, p: PreparedCase): CaseSearch | null {
  if (c.expect.outcome !== 'tool') return null;
  const set = toolSet(p.input.tools);
  if (!set.deferred.has(c.expect.tool) || !set.index) return null;
  const got = set.index.search(p.ctx.message.text, { level: p.ctx.sender.level }).map((h) => h.name);
  return { id: c.id, tool: c.expect.tool, found: got.includes(c.expect.tool), got };
}

/** The printed recall and its misses. */
export function formatRecall(searches: readonly CaseSearch[]): string[] {
  if (searches.length === 0) return ['tool search: no case of this selection expects a deferred tool.'];
  const found = searches.filter((s) => s.found).length;
  const pct = ((found / searches.length) * 100).toFixed(1);
  const loaded = (searches.reduce((a, s) => a + s.got.length, 0) / searches.length).toFixed(1);
  const lines = [
    `tool search: the expected tool is among the at most ${SEARCH_LIMIT} found for ${found} of ${searches.length} ` +
      `cases whose tool is deferred (recall ${pct}%, goal ≥ 98%; ${loaded} tools loaded a search on average).`,
  ];
  for (const s of searches.filter((x) => !x.found))
    lines.push(`  missed ${s.id}: ${s.tool} not in [${s.got.join(', ') || 'nothing found'}]`);
  return lines;
}
