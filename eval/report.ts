/**
 * Results of an evaluation run: per-category accuracy (answer, person, date), the confusion list, tokens,
 * the cache-read share and the cost; saved as JSON so that two prompt versions can be compared.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { TokenUsage } from '../src/core/llm-usage';
import type { Observed, Score } from './score';

export interface CaseResult {
  id: string;
  category: string;
  lang: 'ja' | 'en';
  message: string;
  score: Score;
  observed: Observed;
  usage: TokenUsage;
  costUsd: number;
  calls: number;
  retries: string[];
  /** The model's tool searches before its decision (what it asked for, what was loaded). */
  searches?: { query: string; found: string[] }[];
  durationMs: number;
}

interface Tally {
  n: number;
  pass: number;
  action: number;
  person: [number, number];
  date: [number, number];
}

export interface RunReport {
  version: 1;
  model: string;
  /** The small model of the routing rule, when it was on (absent in reports of earlier versions). */
  routing?: string | null;
  /** Yen per dollar of the yen figures (COST_JPY_PER_USD). */
  jpyPerUsd?: number;
  /** Hash of the prompts and tool definitions: two runs with the same value used the same prompt. */
  promptFingerprint: string;
  startedAt: string;
  finishedAt: string;
  categories: Record<string, Tally>;
  languages: Record<string, Tally>;
  total: Tally;
  confusion: { expected: string; got: string; count: number; cases: string[] }[];
  tokens: TokenUsage & { cacheReadShare: number };
  costUsd: number;
  cases: CaseResult[];
}

function tally(results: CaseResult[]): Tally {
  const t: Tally = { n: 0, pass: 0, action: 0, person: [0, 0], date: [0, 0] };
  for (const r of results) {
    t.n++;
    if (r.score.pass) t.pass++;
    if (r.score.action) t.action++;
    if (r.score.person !== undefined) t.person = [t.person[0] + (r.score.person ? 1 : 0), t.person[1] + 1];
    if (r.score.date !== undefined) t.date = [t.date[0] + (r.score.date ? 1 : 0), t.date[1] + 1];
  }
  return t;
}

function groupBy<T>(xs: T[], key: (x: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of xs) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
  return m;
}

export function buildReport(input: {
  model: string;
  routing?: string | null;
  jpyPerUsd?: number;
  promptFingerprint: string;
  startedAt: Date;
  results: CaseResult[];
}): RunReport {
  const { results } = input;
  const categories = Object.fromEntries(
    [...groupBy(results, (r) => r.category)].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, tally(v)]),
  );
  const languages = Object.fromEntries([...groupBy(results, (r) => r.lang)].map(([k, v]) => [k, tally(v)]));
  const confusion = [
    ...groupBy(
      results.filter((r) => !r.score.pass),
      (r) => `${r.score.expected}\u0000${r.score.got}`,
    ),
  ]
    .map(([k, v]) => ({
      expected: k.split('\u0000')[0]!,
      got: k.split('\u0000')[1]!,
      count: v.length,
      cases: v.map((r) => r.id),
    }))
    .sort((a, b) => b.count - a.count || a.expected.localeCompare(b.expected));
  const sum = (f: (u: TokenUsage) => number) => results.reduce((a, r) => a + f(r.usage), 0);
  const tokens = {
    inputTokens: sum((u) => u.inputTokens),
    outputTokens: sum((u) => u.outputTokens),
    cacheWriteTokens: sum((u) => u.cacheWriteTokens),
    cacheReadTokens: sum((u) => u.cacheReadTokens),
  };
  const prompt = tokens.inputTokens + tokens.cacheWriteTokens + tokens.cacheReadTokens;
  return {
    version: 1,
    model: input.model,
    routing: input.routing ?? null,
    ...(input.jpyPerUsd ? { jpyPerUsd: input.jpyPerUsd } : {}),
    promptFingerprint: input.promptFingerprint,
    startedAt: input.startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    categories,
    languages,
    total: tally(results),
    confusion,
    tokens: { ...tokens, cacheReadShare: prompt > 0 ? tokens.cacheReadTokens / prompt : 0 },
    costUsd: Math.round(results.reduce((a, r) => a + r.costUsd, 0) * 1e6) / 1e6,
    cases: results,
  };
}

const pct = (a: number, n: number): string => (n === 0 ? '—' : `${Math.round((a / n) * 100)}%`);
const frac = ([ok, n]: [number, number]): string => (n === 0 ? '—' : `${pct(ok, n)} (${ok}/${n})`);
const int = (n: number): string => n.toLocaleString('en-US');
const share = (x: number): string => `${(x * 100).toFixed(1)}%`;

function row(name: string, t: Tally): string {
  return columns(name, String(t.n), pct(t.pass, t.n), pct(t.action, t.n), frac(t.person), frac(t.date));
}

/** One line of the category table (fixed column widths). */
function columns(name: string, n: string, pass: string, answer: string, person: string, date: string): string {
  const cells = [n.padStart(4), pass.padStart(5), answer.padStart(6), person.padEnd(13)];
  return `${name.padEnd(22)} ${cells.join('  ')} ${date}`;
}

/** The printed summary. */
export function formatReport(r: RunReport): string[] {
  const routed = r.routing ? ` · routing on (small model ${r.routing})` : ' · routing off';
  const lines = [
    `model ${r.model}${routed} · prompt ${r.promptFingerprint} · ${r.total.n} cases`,
    '',
    columns('category', 'n', 'pass', 'answer', 'person', 'date'),
    ...Object.entries(r.categories).map(([k, t]) => row(k, t)),
    row('all', r.total),
    ...Object.entries(r.languages).map(([k, t]) => row(k === 'ja' ? 'Japanese' : 'English', t)),
    '',
    '"pass": every check of the case; "answer": the right kind of answer (and tool); ' +
      'person/date: of the cases naming one.',
  ];
  if (r.confusion.length > 0) {
    lines.push('', 'confusion (expected → got):');
    for (const c of r.confusion) lines.push(`  ${c.expected} → ${c.got}  ×${c.count}  (${c.cases.join(', ')})`);
  }
  const t = r.tokens;
  lines.push(
    '',
    `tokens: input ${int(t.inputTokens)} · output ${int(t.outputTokens)} · cache write ${int(t.cacheWriteTokens)}` +
      ` · cache read ${int(t.cacheReadTokens)} (cache reads are ${share(t.cacheReadShare)} of prompt tokens)`,
  );
  const searched = r.cases.filter((c) => (c.searches ?? []).length > 0);
  if (searched.length > 0) {
    const n = searched.reduce((a, c) => a + c.searches!.length, 0);
    lines.push(`tool searches: ${n} in ${searched.length} of ${r.total.n} cases (each one more model call)`);
  }
  const each = r.total.n > 0 ? r.costUsd / r.total.n : 0;
  const yen = r.jpyPerUsd ? ` = ¥${(each * r.jpyPerUsd).toFixed(2)} at ¥${r.jpyPerUsd}/$` : '';
  const perCase = r.total.n > 0 ? `$${each.toFixed(4)} per case${yen}` : 'no cases';
  const pass = `pass rate ${pct(r.total.pass, r.total.n)} (${r.total.pass}/${r.total.n})`;
  lines.push(`${pass} · cost $${r.costUsd.toFixed(4)} (${perCase})`);
  return lines;
}

export function saveReport(r: RunReport, file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(r, null, 2)}\n`);
}

/** Two saved runs side by side: accuracy per category and the cases whose result changed. */
export function compareReports(a: RunReport, b: RunReport): string[] {
  const lines = [
    `A: ${a.model} prompt ${a.promptFingerprint} (${a.startedAt})`,
    `B: ${b.model} prompt ${b.promptFingerprint} (${b.startedAt})`,
    '',
    `${'category'.padEnd(22)} ${'A pass'.padStart(7)} ${'B pass'.padStart(7)}  change`,
  ];
  const cats = [...new Set([...Object.keys(a.categories), ...Object.keys(b.categories)])].sort();
  const line = (name: string, x: Tally | undefined, y: Tally | undefined) => {
    const p = (t: Tally | undefined) => (t ? t.pass / t.n : NaN);
    const d = Math.round((p(y) - p(x)) * 100);
    const change = Number.isNaN(d) ? '' : `${d > 0 ? '+' : ''}${d} pt`;
    const passOf = (t: Tally | undefined) => (t ? pct(t.pass, t.n) : '—').padStart(7);
    lines.push(`${name.padEnd(22)} ${passOf(x)} ${passOf(y)}  ${change}`);
  };
  for (const c of cats) line(c, a.categories[c], b.categories[c]);
  line('all', a.total, b.total);
  const before = new Map(a.cases.map((c) => [c.id, c]));
  const flipped = b.cases.filter((c) => before.has(c.id) && before.get(c.id)!.score.pass !== c.score.pass);
  if (flipped.length > 0) {
    lines.push('', 'changed cases:');
    for (const c of flipped) {
      const old = before.get(c.id)!;
      const verdict = (x: CaseResult) => (x.score.pass ? 'pass' : 'fail');
      lines.push(`  ${c.id}: ${verdict(old)} → ${verdict(c)} (A ${old.score.got}, B ${c.score.got})`);
    }
  }
  lines.push(
    '',
    `cost: A $${a.costUsd.toFixed(4)} · B $${b.costUsd.toFixed(4)}; ` +
      `cache-read share: A ${share(a.tokens.cacheReadShare)} · B ${share(b.tokens.cacheReadShare)}`,
  );
  return lines;
}
