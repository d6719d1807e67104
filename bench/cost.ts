// `npm run bench` (first) or `npm run bench:cost`: yen per conversation on a 40-turn and a 150-turn office day.
//
// A conversation is one message a person sends Hisho and every model request made to answer it: the first decision
// and each further step of its tool loop. The person's 「はい」 to a question is a message of its own, answered by
// the report of the action that ran (as /admin counts conversations: every message to Hisho). Background calls the
// conversations cause (conversation summaries, self-critiques) are shared among them. A 40-turn day: 40 messages
// asking Hisho something, and the 「はい」 answering its questions.
//
// The requests are the service's own: every member case of the evaluation set (eval/cases) is set up in a
// throwaway database and its request built by the functions the service uses (eval/world.ts: the webhook's
// message, the turn's context, brainInput, decisionRequest, toAnthropicRequest — tests/eval/service-parity.test.ts
// holds them byte-equal to the service's). So the cached prefix (tools + system) is read from the live code: when
// it shrinks, these figures follow. Tokens: @anthropic-ai/tokenizer (the open Claude tokenizer; it approximates the
// current models' counts — Anthropic says 4.7+ models count up to ~30 % more on some text — and leaves out the
// API's own tool-use preamble). The cache: bench/office-day.ts, with its lifetime. Prices: src/brain/pricing.ts.
// Raw figures: bench/results/cost-<date>.json.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { countTokens } from '@anthropic-ai/tokenizer';
import { decisionRequest } from '../src/brain/brain';
import { toAnthropicRequest, type AnthropicRequest } from '../src/brain/anthropic-client';
import { chooseCacheTtl, gapsOf } from '../src/brain/cache-lifetime';
import { confirmedActionContinuation } from '../src/brain/continuation';
import type { CacheTtl } from '../src/brain/llm-client';
import { priceOf } from '../src/brain/pricing';
import { loadPrompts, PROMPTS_DIR, type PromptSet } from '../src/brain/prompts';
import { routeModel } from '../src/brain/routing';
import { loadConfig, type Env } from '../src/config/env';
import { personaNames } from '../src/core/messages';
import { ToolRegistry } from '../src/tools/registry';
import { handlers } from '../handlers';
import { loadCases, type EvalCase, type ParamExpectation } from '../eval/cases';
import { BOT_NAME, openWorld, type PreparedCase } from '../eval/world';
import { officeArrivals, seeded, simulateDay, type Conversation, type DayCost, type SimRequest } from './office-day';

/** Assumptions, printed with the figures. */
const OUTPUT_TOKENS = 400; // every request's answer (thinking included)
const TOOL_RESULT_TOKENS = 150; // a tool's result sent back in the next step
const SEARCH_RESULT_TOKENS = 50; // a tool search's result (tool references), besides the definitions it loads
const STEP_SECONDS = 8; // the next step of a tool loop follows the model's answer
const CONFIRM_SECONDS = 60; // the person answers 「はい」 a minute after the question
const SUMMARY_DATA_TOKENS = 1400; // 20 older messages and the previous summary
const CRITIQUE_DATA_TOKENS = 1500; // the redacted record of the reviewed turn
const DAYS = Number(process.env.BENCH_COST_DAYS ?? 100);
const DAY_SIZES = [40, 150];

/** A configuration to price: the main model, the routing rule and the cache lifetime. */
interface Setting {
  name: string;
  main: string;
  small: string;
  routing: boolean;
  ttl: CacheTtl | 'auto';
  /** The method: one request a message (its first decision), no background calls. */
  firstRequestOnly?: boolean;
}

/** One member case as requests: the first decision, and what follows by its expected outcome. */
interface CasePlan {
  id: string;
  kind: 'reply' | 'acts' | 'confirms';
  first: Built;
  report: Built | null;
  /** Tokens a tool search adds when the tool the case needs is deferred (0: it is loaded, no search). */
  search: number;
}

/** A request built by the service's code, measured: its prefix breakpoints and its prompt tokens. */
interface Built {
  prefixKey: string;
  /** Tokens of the tools loaded in the prompt (deferred tools are not, until a search loads them). */
  toolTokens: number;
  systemTokens: number;
  messageTokens: number;
  /** Tokens of each deferred tool's definition (`defer_loading`), by name: what loading it adds. */
  deferred: Map<string, number>;
  mayAct: boolean;
  purpose: string;
}

const tokenCache = new Map<string, number>();
function tokens(text: string): number {
  let n = tokenCache.get(text);
  if (n === undefined) {
    n = countTokens(text);
    tokenCache.set(text, n);
  }
  return n;
}

/** Tokens of a request body by part: each tool as JSON, the system text, the messages' text and tool blocks. */
function measure(body: AnthropicRequest, purpose: string, mayAct: boolean): Built {
  const isDeferred = (t: object) => (t as { defer_loading?: boolean }).defer_loading === true;
  const tools = body.tools.filter((t) => !isDeferred(t)).map(({ cache_control: _, ...t }) => t);
  const deferred = new Map(body.tools.filter(isDeferred).map((t) => [t.name, tokens(JSON.stringify(t))]));
  const toolJson = JSON.stringify(tools);
  const system = body.system.map((b) => b.text).join('\n');
  const messageTokens = body.messages.reduce((sum, m) => {
    if (typeof m.content === 'string') return sum + tokens(m.content);
    return sum + m.content.reduce((s, b) => s + (b.type === 'text' ? tokens(b.text) : tokens(JSON.stringify(b))), 0);
  }, 0);
  const prefixKey = createHash('sha256').update(toolJson).update('\u0000').update(system).digest('hex');
  const toolTokens = tokens(toolJson);
  return { prefixKey, toolTokens, systemTokens: tokens(system), messageTokens, deferred, mayAct, purpose };
}

/** A sample value of an expected parameter (the call the report restates). */
function sample(e: ParamExpectation): unknown {
  if (typeof e !== 'object' || Array.isArray(e)) return e;
  if ('oneOf' in e) return e.oneOf[0];
  if ('containsAny' in e) return e.containsAny[0];
  if ('present' in e) return e.present;
  if ('absentOr' in e) return e.absentOr;
  return e.fields;
}

function planOf(c: EvalCase, p: PreparedCase, prompts: PromptSet, config: Readonly<Env>): CasePlan {
  const body = (input: Parameters<typeof decisionRequest>[1]) =>
    toAnthropicRequest(decisionRequest(prompts, input, config.ANTHROPIC_MODEL, config.LLM_MAX_TOKENS));
  const first = measure(body(p.input), 'turn', p.input.tools.length > 0);
  const e = c.expect;
  if (e.outcome !== 'tool') return { id: c.id, kind: 'reply', first, report: null, search: 0 };
  // A deferred tool is found first: one more request, whose answer (a search call) and result (the tool's
  // definition, loaded by its reference) the next request carries.
  const loading = first.deferred.get(e.tool);
  const search = loading === undefined ? 0 : OUTPUT_TOKENS + SEARCH_RESULT_TOKENS + loading;
  const confirms = e.verdict.guardian === 'CONFIRM' || e.verdict.auth === 'CONFIRM';
  if (!confirms) return { id: c.id, kind: 'acts', first, report: null, search };
  const parameters = Object.fromEntries(Object.entries(e.params).map(([k, v]) => [k, sample(v)]));
  const proposal = { id: 'toolu_bench', toolName: e.tool, parameters };
  const continuation = confirmedActionContinuation({
    proposal,
    reasoning: 'The person asked for it.',
    confidence: e.confidence,
    summary: `${e.tool} as asked`,
    result: { proposalId: proposal.id, content: JSON.stringify({ ok: true, id: 'a1b2c3' }), isError: false },
    note: 'The person confirmed this action; it has now run. Report the result with the reply tool.',
  });
  const report = measure(body({ ctx: p.ctx, tools: [], continuation }), 'report_confirmed', false);
  return { id: c.id, kind: 'confirms', first, report, search };
}

/** The simulated request of a built one under a setting. `extra`: tokens the loop added (earlier steps). */
function simRequest(b: Built, s: Setting, ttl: CacheTtl, extra = 0): SimRequest {
  const model = routeModel(
    { purpose: b.purpose, mayAct: b.mayAct },
    { mainModel: s.main, smallModel: s.small, routing: s.routing },
  );
  return {
    model,
    breakpoints: [
      { key: `${b.prefixKey}:tools`, tokens: b.toolTokens, ttl },
      { key: `${b.prefixKey}:system`, tokens: b.toolTokens + b.systemTokens, ttl },
    ],
    promptTokens: b.toolTokens + b.systemTokens + b.messageTokens + extra,
    outputTokens: OUTPUT_TOKENS,
  };
}

/** A background call (no cached prefix): its instructions and its data. */
function background(model: string, instructions: number, data: number): SimRequest {
  return { model, breakpoints: [], promptTokens: instructions + data, outputTokens: OUTPUT_TOKENS };
}

function conversationOf(
  plan: CasePlan,
  s: Setting,
  ttl: CacheTtl,
  extras: { summary: SimRequest | null; critique: SimRequest | null },
): Conversation {
  const requests: Conversation['requests'] = [{ afterSeconds: 0, request: simRequest(plan.first, s, ttl) }];
  if (s.firstRequestOnly) return { requests, messages: 1 };
  if (plan.search > 0)
    requests.push({ afterSeconds: STEP_SECONDS, request: simRequest(plan.first, s, ttl, plan.search) });
  if (plan.kind === 'acts')
    requests.push({
      afterSeconds: STEP_SECONDS * requests.length,
      request: simRequest(plan.first, s, ttl, plan.search + OUTPUT_TOKENS + TOOL_RESULT_TOKENS),
    });
  // The person's 「はい」 is a message of its own: the report answers it (a conversation of its own, as in /admin).
  if (plan.report) requests.push({ afterSeconds: CONFIRM_SECONDS, request: simRequest(plan.report, s, ttl) });
  const last = requests.at(-1)!.afterSeconds;
  if (extras.summary) requests.push({ afterSeconds: last + 5, request: extras.summary });
  if (extras.critique) requests.push({ afterSeconds: last + 5, request: extras.critique });
  return { requests, messages: plan.report ? 2 : 1 };
}

export interface Figures {
  setting: Setting;
  turnsPerDay: number;
  ttl: CacheTtl;
  yenPerConversation: number;
  yen: { prefixWrite: number; prefixRead: number; input: number; output: number };
  requestsPerConversation: number;
  tokensPerConversation: DayCost['tokens'];
}

function run(plans: CasePlan[], s: Setting, n: number, config: Readonly<Env>): Figures {
  const instructions = (f: string) => tokens(fs.readFileSync(path.join(PROMPTS_DIR, f), 'utf8'));
  const summaryModel = routeModel(
    { purpose: 'conversation_summary', mayAct: false },
    { mainModel: s.main, smallModel: s.small, routing: s.routing },
  );
  const summary = background(summaryModel, instructions('conversation-summary.md'), SUMMARY_DATA_TOKENS);
  const critique = background(s.main, instructions('self-critique.md'), CRITIQUE_DATA_TOKENS);
  // LLM_CACHE_TTL=auto: the lifetime the organisation's measured traffic leads to (a day like these, then a night).
  const ttl: CacheTtl =
    s.ttl !== 'auto'
      ? s.ttl
      : chooseCacheTtl(
          gapsOf([...officeArrivals(n, seeded(7)), 86_400 + 9 * 3600].map((t) => new Date(t * 1000))),
          priceOf(s.main),
        ).ttl;
  // A summary every SUMMARY_EVERY_MESSAGES older messages of a conversation (a message and its answer: two).
  const summaryEvery = config.SUMMARY_EVERY_MESSAGES > 0 ? config.SUMMARY_EVERY_MESSAGES / 2 : Infinity;
  const sum: DayCost = {
    conversations: 0,
    requests: 0,
    usd: { prefixWrite: 0, prefixRead: 0, input: 0, output: 0 },
    tokens: { inputTokens: 0, outputTokens: 0, cacheWriteTokens: 0, cacheReadTokens: 0, cacheWrite1hTokens: 0 },
  };
  for (let d = 0; d < DAYS; d++) {
    const random = seeded(1000 + d);
    const arrivals = officeArrivals(n, random);
    const conversations = arrivals.map((_, i) =>
      conversationOf(plans[Math.floor(random() * plans.length)]!, s, ttl, {
        summary: (i + 1) % summaryEvery === 0 ? summary : null,
        critique: random() < config.SELF_CRITIQUE_RATE ? critique : null,
      }),
    );
    const day = simulateDay(conversations, arrivals);
    sum.conversations += day.conversations;
    sum.requests += day.requests;
    for (const k of Object.keys(sum.usd) as (keyof DayCost['usd'])[]) sum.usd[k] += day.usd[k];
    for (const k of Object.keys(sum.tokens) as (keyof DayCost['tokens'])[]) sum.tokens[k] += day.tokens[k];
  }
  const rate = config.COST_JPY_PER_USD;
  const per = (usd: number) => (usd * rate) / sum.conversations;
  const total = sum.usd.prefixWrite + sum.usd.prefixRead + sum.usd.input + sum.usd.output;
  return {
    setting: s,
    turnsPerDay: n,
    ttl,
    yenPerConversation: per(total),
    yen: {
      prefixWrite: per(sum.usd.prefixWrite),
      prefixRead: per(sum.usd.prefixRead),
      input: per(sum.usd.input),
      output: per(sum.usd.output),
    },
    requestsPerConversation: sum.requests / sum.conversations,
    tokensPerConversation: {
      inputTokens: Math.round(sum.tokens.inputTokens / sum.conversations),
      outputTokens: Math.round(sum.tokens.outputTokens / sum.conversations),
      cacheWriteTokens: Math.round(sum.tokens.cacheWriteTokens / sum.conversations),
      cacheReadTokens: Math.round(sum.tokens.cacheReadTokens / sum.conversations),
      cacheWrite1hTokens: Math.round(sum.tokens.cacheWrite1hTokens / sum.conversations),
    },
  };
}

/** The settings priced: before this bench's changes, the defaults, and the cheaper ones. */
function settings(config: Readonly<Env>): Setting[] {
  const small = config.LLM_SMALL_MODEL;
  const opus = 'claude-opus-5-5';
  return [
    {
      name: "issue 39's method (first requests only)",
      main: opus,
      small,
      routing: false,
      ttl: '5m',
      firstRequestOnly: true,
    },
    // The method with today's settings: the figures its targets (≤ ¥2.0 default, ≤ ¥1.0 cheaper) compare to.
    { name: "issue 39's method, defaults", main: opus, small, routing: true, ttl: 'auto', firstRequestOnly: true },
    {
      name: "issue 39's method, cheaper (Sonnet 5.5)",
      main: 'claude-sonnet-5-5',
      small,
      routing: true,
      ttl: 'auto',
      firstRequestOnly: true,
    },
    { name: 'before: Opus 5.5, 5-min cache, no routing', main: opus, small, routing: false, ttl: '5m' },
    { name: 'Opus 5.5, cache by traffic, no routing', main: opus, small, routing: false, ttl: 'auto' },
    { name: 'defaults: Opus 5.5, cache by traffic, routing', main: opus, small, routing: true, ttl: 'auto' },
    {
      name: 'cheaper: Sonnet 5.5, cache by traffic, routing',
      main: 'claude-sonnet-5-5',
      small,
      routing: true,
      ttl: 'auto',
    },
    { name: 'cheapest: Haiku 5.5 for every call', main: 'claude-haiku-5-5', small, routing: true, ttl: 'auto' },
  ];
}

const yen = (x: number) => `¥${x.toFixed(2)}`;

export async function costBench(o: { databaseUrl?: string; log?: (line: string) => void } = {}): Promise<Figures[]> {
  const log = o.log ?? console.log;
  const config = loadConfig({ ...process.env, ...(o.databaseUrl ? { DATABASE_URL: o.databaseUrl } : {}) });
  const prompts = loadPrompts(config.PERSONA);
  const registry = new ToolRegistry(handlers);
  const cases = loadCases();
  const world = await openWorld({
    databaseUrl: config.DATABASE_URL,
    slots: 1,
    registry,
    defaultUserLevel: config.DEFAULT_USER_LEVEL,
    botNames: [...personaNames(prompts), BOT_NAME],
  });
  const plans: CasePlan[] = [];
  try {
    for (const c of cases) {
      const p = await world.slots[0]!.prepare(c);
      // An office's day: its members writing in its rooms (public rooms and strangers are another audience).
      if (p.input.tools.length === 0) continue;
      plans.push(planOf(c, p, prompts, config));
    }
  } finally {
    await world.close();
  }
  const first = plans[0]!.first;
  const avg = (f: (p: CasePlan) => number) => plans.reduce((a, p) => a + f(p), 0) / plans.length;
  const kinds = (k: CasePlan['kind']) => plans.filter((p) => p.kind === k).length;
  const searching = plans.filter((p) => p.search > 0).length;
  log('cost per conversation (bench/cost.ts)');
  log(
    `  requests built by the service's code for ${plans.length} member cases of eval/cases ` +
      `(${kinds('reply')} answered in words, ${kinds('acts')} acting: 2 requests, ` +
      `${kinds('confirms')} asking first: +1 report after 「はい」; ${searching} finding a deferred tool first: +1)`,
  );
  log(
    `  cached prefix: ${first.toolTokens + first.systemTokens} tokens (tools ${first.toolTokens}, ` +
      `system ${first.systemTokens}); rest of a first request: ${Math.round(avg((p) => p.first.messageTokens))} ` +
      'tokens on average (@anthropic-ai/tokenizer: an approximation)',
  );
  log(
    `  assumed: ${OUTPUT_TOKENS} output tokens a request, a tool result of ${TOOL_RESULT_TOKENS} tokens, a summary ` +
      `every ${config.SUMMARY_EVERY_MESSAGES / 2} conversations, ` +
      `self-critique of ${config.SELF_CRITIQUE_RATE * 100} %; ` +
      `¥${config.COST_JPY_PER_USD}/$ (COST_JPY_PER_USD); ${DAYS} office days of each size, arrivals 9:00–18:00`,
  );
  const out: Figures[] = [];
  for (const s of settings(config)) {
    for (const n of DAY_SIZES) {
      const f = run(plans, s, n, config);
      out.push(f);
      const y = f.yen;
      log(
        `  ${s.name.padEnd(54)} ${String(n).padStart(3)} turns/day  ${yen(f.yenPerConversation).padStart(7)} ` +
          `per conversation (cache ${f.ttl}; prefix write ${yen(y.prefixWrite)}, read ${yen(y.prefixRead)}, ` +
          `other input ${yen(y.input)}, output ${yen(y.output)}; ${f.requestsPerConversation.toFixed(2)} requests)`,
      );
    }
  }
  const dir = path.resolve(__dirname, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `cost-${new Date().toISOString().slice(0, 10)}.json`);
  const raw = {
    measuredAt: new Date().toISOString(),
    assumptions: {
      outputTokens: OUTPUT_TOKENS,
      toolResultTokens: TOOL_RESULT_TOKENS,
      searchResultTokens: SEARCH_RESULT_TOKENS,
      jpyPerUsd: config.COST_JPY_PER_USD,
      days: DAYS,
      summaryEveryMessages: config.SUMMARY_EVERY_MESSAGES,
      selfCritiqueRate: config.SELF_CRITIQUE_RATE,
      tokenizer: '@anthropic-ai/tokenizer (approximation)',
    },
    prefix: { toolTokens: first.toolTokens, systemTokens: first.systemTokens },
    cases: plans.map((p) => ({ id: p.id, kind: p.kind, messageTokens: p.first.messageTokens, search: p.search })),
    figures: out,
  };
  fs.writeFileSync(file, `${JSON.stringify(raw, null, 1)}\n`);
  log(`  raw figures: ${path.relative(process.cwd(), file)}`);
  return out;
}

if (require.main === module) {
  costBench().then(
    () => process.exit(0),
    (err: Error) => {
      console.error(`cost bench failed: ${err.stack ?? err.message}`);
      process.exit(1);
    },
  );
}
