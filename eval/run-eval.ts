/**
 * `npm run eval`: checks the evaluation set offline (registry, zod schemas, Guardian and Gate verdicts,
 * each case's request built by the service's own functions, see world.ts), then — only when ANTHROPIC_API_KEY
 * is set and every check passed — asks the model case by case (concurrency-limited) and reports how it did.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { Brain, BrainFailure, decisionRequest } from '../src/brain/brain';
import { AnthropicLlmClient, anthropicTool, toAnthropicRequest } from '../src/brain/anthropic-client';
import { routeModel } from '../src/brain/routing';
import { modelTool } from '../src/brain/tool-definitions';
import type { TokenUsage } from '../src/core/llm-usage';
import { personaNames } from '../src/core/messages';
import { loadPrompts, type PromptSet } from '../src/brain/prompts';
import { ConfigError, loadConfig, type Env } from '../src/config/env';
import { asAppError } from '../src/core/app-error';
import { MEMBER_ROLES } from '../src/authorization/person-scope';
import { resolvePerson } from '../src/tools/person-resolver';
import { checkReplyText, defaultGuardianConfig } from '../src/guardian';
import { isAllWord } from '../src/guardian/param-values';
import { ToolRegistry } from '../src/tools/registry';
import { handlers } from '../handlers';
import type { BrainOutput } from '../src/core/proposal';
import { CaseFileError, loadCases, type EvalCase } from './cases';
import { decide, situationProblems, structuralProblems } from './offline';
import { buildReport, formatReport, saveReport, type CaseResult, type RunReport } from './report';
import { scoreCase, type Observed, type ObservedProposal, type PersonReading } from './score';
import { caseSearch, formatRecall, type CaseSearch } from './tool-search';
import { BOT_NAME, EVAL_ORG, openWorld, type PreparedCase, type Slot } from './world';

const NAMED_PERSON_ROLES: ReadonlySet<string> = new Set(MEMBER_ROLES);

export const RESULTS_DIR = path.resolve(__dirname, 'results');

export interface EvalOptions {
  /** The environment (ANTHROPIC_*, DATABASE_URL, PERSONA, LLM_*); read like the service reads it. */
  env: Record<string, string | undefined>;
  casesDir?: string;
  /** Case ids (or id prefixes) to run. */
  only?: string[];
  categories?: string[];
  concurrency?: number;
  /** Only the offline checks, even with a key. */
  offline?: boolean;
  /** Results file (default eval/results/<time>-<model>.json). */
  out?: string;
  log: (line: string) => void;
}

export interface EvalOutcome {
  exitCode: number;
  /** Present after an online run. */
  report?: RunReport;
  resultsFile?: string;
  problems: string[];
}

const ZERO: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheWriteTokens: 0, cacheReadTokens: 0 };

export async function runEval(o: EvalOptions): Promise<EvalOutcome> {
  const fail = (problems: string[], headline: string): EvalOutcome => {
    o.log(headline);
    for (const p of problems) o.log(`  - ${p}`);
    return { exitCode: 1, problems };
  };
  let config: Readonly<Env>;
  let cases: EvalCase[];
  try {
    config = loadConfig(o.env);
    cases = select(loadCases(o.casesDir), o);
  } catch (err) {
    if (err instanceof CaseFileError || err instanceof ConfigError)
      return err instanceof CaseFileError
        ? fail(err.problems, `${err.message.split('\n')[0]} The model was not asked.`)
        : fail(err.message.split('\n'), 'Invalid configuration. The model was not asked.');
    throw err;
  }
  if (cases.length === 0) return fail([], 'No case matches the selection. The model was not asked.');
  const registry = new ToolRegistry(handlers);
  const structural = cases.flatMap((c) => structuralProblems(c, registry));
  if (structural.length > 0) {
    const headline = `The set names tools or parameters the registry does not accept (${structural.length}).`;
    return fail(structural, `${headline}\nStopped before asking the model:`);
  }

  const online = Boolean(config.ANTHROPIC_API_KEY) && !o.offline;
  const concurrency = Math.max(1, Math.min(o.concurrency ?? Number(o.env.EVAL_CONCURRENCY ?? 4), 16));
  const prompts = loadPrompts(config.PERSONA);
  const world = await openWorld({
    databaseUrl: config.DATABASE_URL,
    slots: Math.min(concurrency, cases.length),
    registry,
    defaultUserLevel: config.DEFAULT_USER_LEVEL,
    // The names the service strips from a ChatWork message: the persona's and the bot's display name.
    botNames: [...personaNames(prompts), BOT_NAME],
  });
  try {
    const checked = await checkSituations(cases, world.slots, registry, prompts, config);
    if (checked.problems.length > 0) {
      const headline = `The expected verdicts or situations of ${checked.failing} case(s) do not hold.`;
      return fail(checked.problems, `${headline} Stopped before asking the model:`);
    }
    o.log(
      `offline checks passed: ${cases.length} cases (${checked.proposals} expected proposals validated by the ` +
        "registry's schemas and decided by the real Guardian and AuthorizationGate; every request built by the " +
        `service's own code — cacheable prefix ${checked.prefixShare.toFixed(1)}% of request characters ` +
        'on average).',
    );
    for (const line of formatRecall(checked.searches)) o.log(line);
    if (!online) {
      o.log(
        config.ANTHROPIC_API_KEY
          ? 'The model was not asked (--offline).'
          : 'The model was not asked: ANTHROPIC_API_KEY is not set. Set it to measure the model on these cases.',
      );
      return { exitCode: 0, problems: [] };
    }
    return await askModel(cases, world.slots, registry, prompts, config, o, concurrency);
  } finally {
    await world.close();
  }
}

function select(cases: EvalCase[], o: EvalOptions): EvalCase[] {
  return cases.filter(
    (c) =>
      (!o.only?.length || o.only.some((p) => c.id === p || c.id.startsWith(p))) &&
      (!o.categories?.length || o.categories.includes(c.category)),
  );
}

/** Runs `fn` over the cases, one slot per worker, keeping the case order in the results. */
async function eachInSlots<T>(
  cases: EvalCase[],
  slots: Slot[],
  fn: (c: EvalCase, slot: Slot, index: number) => Promise<T>,
): Promise<T[]> {
  const out: T[] = new Array(cases.length);
  let next = 0;
  await Promise.all(
    slots.map(async (slot) => {
      while (next < cases.length) {
        const i = next++;
        out[i] = await fn(cases[i]!, slot, i);
      }
    }),
  );
  return out;
}

async function checkSituations(
  cases: EvalCase[],
  slots: Slot[],
  registry: ToolRegistry,
  prompts: PromptSet,
  config: Readonly<Env>,
): Promise<{ problems: string[]; failing: number; proposals: number; prefixShare: number; searches: CaseSearch[] }> {
  const results = await eachInSlots(cases, slots, async (c, slot) => {
    let p: PreparedCase;
    try {
      p = await slot.prepare(c);
    } catch (err) {
      return {
        problems: [`${c.file} case ${c.id}: the situation cannot be built: ${(err as Error).message}`],
        proposals: 0,
        share: 0,
        search: null,
      };
    }
    const req = toAnthropicRequest(decisionRequest(prompts, p.input, config.ANTHROPIC_MODEL, config.LLM_MAX_TOKENS));
    // The cacheable prefix is the loaded tools and the whole (stable) system block; the deferred tools are sent but
    // not in the prompt until a search loads them; everything else is in the messages.
    const loaded = req.tools.filter((t) => !t.defer_loading);
    const prefix = JSON.stringify(loaded).length + req.system.reduce((n, b) => n + b.text.length, 0);
    const total = prefix + JSON.stringify(req.messages).length;
    const proposals = [c.expect, ...c.expect.alsoAccept].filter(
      (x) => x.outcome === 'tool' || (x.outcome === 'refuse' && x.unsafe),
    ).length;
    return {
      problems: situationProblems(c, p, registry),
      proposals,
      share: (prefix / total) * 100,
      search: caseSearch(c, p),
    };
  });
  return {
    problems: results.flatMap((r) => r.problems),
    failing: results.filter((r) => r.problems.length > 0).length,
    proposals: results.reduce((a, r) => a + r.proposals, 0),
    prefixShare: results.reduce((a, r) => a + r.share, 0) / results.length,
    searches: results.flatMap((r) => (r.search ? [r.search] : [])),
  };
}

async function askModel(
  cases: EvalCase[],
  slots: Slot[],
  registry: ToolRegistry,
  prompts: PromptSet,
  config: Readonly<Env>,
  o: EvalOptions,
  concurrency: number,
): Promise<EvalOutcome> {
  const llm = new AnthropicLlmClient({
    apiKey: config.ANTHROPIC_API_KEY!,
    baseURL: config.ANTHROPIC_BASE_URL,
    timeoutMs: config.LLM_TIMEOUT_MS,
    maxRetries: config.LLM_MAX_RETRIES,
  });
  const model = config.ANTHROPIC_MODEL;
  // The service's routing rule (LLM_ROUTING, LLM_SMALL_MODEL): a case offered no capability tool (a public room, a
  // stranger) is asked of the small model when it is on.
  const rule = { mainModel: model, smallModel: config.LLM_SMALL_MODEL, routing: config.LLM_ROUTING };
  const brain = new Brain({
    llm,
    prompts,
    models: { select: async (job) => ({ model: routeModel(job, rule) }) },
    maxTokens: config.LLM_MAX_TOKENS,
  });
  const startedAt = new Date();
  const routing = rule.routing ? `routing on (small model ${rule.smallModel})` : 'routing off';
  o.log(`asking ${model}, ${routing}, on ${cases.length} cases (${concurrency} at a time)…`);
  let done = 0;
  let rejected: string | null = null;
  const results = await eachInSlots(cases, slots, async (c, slot): Promise<CaseResult | null> => {
    if (rejected) return null;
    const t0 = performance.now();
    const p = await slot.prepare(c);
    let observed: Observed;
    let usage = { ...ZERO };
    let calls = 0;
    let costUsd = 0;
    let retries: string[] = [];
    let searches: CaseResult['searches'] = [];
    try {
      // The decision after any tool search the model made (the brain answers find_tools and asks again).
      const d = await brain.decide(p.input);
      ({ usage, calls, costUsd, retries } = sumCalls(d.calls, d.retries));
      searches = d.searches ?? [];
      observed = await observe(d.output, p, registry);
    } catch (err) {
      const app = asAppError(err);
      if (err instanceof BrainFailure) ({ usage, calls, costUsd, retries } = sumCalls(err.calls, err.retries));
      if (app.code === 'LLM_NOT_CONFIGURED') rejected = app.message;
      observed = { kind: 'error', code: app.code, message: app.message };
    }
    const score = scoreCase(c, observed, scoreFacts(p, registry));
    const durationMs = Math.round(performance.now() - t0);
    done++;
    const why = score.pass ? '' : ` (expected ${score.expected}: ${score.notes.join('; ')})`;
    const found = searches.map((x) => `«${x.query.slice(0, 40)}» → ${x.found.join(', ') || 'nothing'}`);
    const searched = found.length > 0 ? `  searched ${found.join('; ')}` : '';
    const head = `[${String(done).padStart(3)}/${cases.length}] ${c.id.padEnd(24)} ${score.pass ? 'pass' : 'FAIL'}`;
    o.log(`${head}  ${score.got}${why} ${(durationMs / 1000).toFixed(1)} s $${costUsd.toFixed(4)}${searched}`);
    return {
      id: c.id,
      category: c.category,
      lang: c.lang,
      message: c.message,
      score,
      observed,
      usage,
      costUsd,
      calls,
      retries,
      searches,
      durationMs,
    };
  });
  if (rejected) {
    o.log(`The API rejected the key (${rejected}). Stopped; nothing was saved.`);
    return { exitCode: 1, problems: [rejected] };
  }
  const report = buildReport({
    model,
    routing: rule.routing ? rule.smallModel : null,
    jpyPerUsd: config.COST_JPY_PER_USD,
    promptFingerprint: fingerprint(prompts, registry),
    startedAt,
    results: results.filter((r): r is CaseResult => r !== null),
  });
  for (const line of formatReport(report)) o.log(line);
  const file = o.out ?? path.join(RESULTS_DIR, `${startedAt.toISOString().replace(/[:.]/g, '-')}-${model}.json`);
  saveReport(report, file);
  const shown = path.relative(process.cwd(), file);
  o.log(`results saved to ${shown.startsWith('..') ? file : shown} (compare: npm run eval -- --compare A.json B.json)`);
  return { exitCode: 0, report, resultsFile: file, problems: [] };
}

function sumCalls(
  calls: { usage: TokenUsage; costUsd: number }[],
  retries: string[],
): { usage: TokenUsage; calls: number; costUsd: number; retries: string[] } {
  const usage = calls.reduce(
    (a, c) => ({
      inputTokens: a.inputTokens + c.usage.inputTokens,
      outputTokens: a.outputTokens + c.usage.outputTokens,
      cacheWriteTokens: a.cacheWriteTokens + c.usage.cacheWriteTokens,
      cacheReadTokens: a.cacheReadTokens + c.usage.cacheReadTokens,
    }),
    { ...ZERO },
  );
  // Each call priced with its own model (routed cases use the small one).
  const costUsd = calls.reduce((a, c) => a + c.costUsd, 0);
  return { usage, calls: calls.length, costUsd, retries };
}

/** What the person would get from this answer: the Guardian's fixes, the Gate's verdict, the resolver's reading. */
async function observe(out: BrainOutput, p: PreparedCase, registry: ToolRegistry): Promise<Observed> {
  // The person reads the text after the Guardian's output check: a blocked text never reaches them.
  const shown = (text: string) => {
    const check = checkReplyText(text, defaultGuardianConfig());
    return check.action === 'BLOCK' ? `(blocked by the Guardian: ${check.reasonCode})` : check.text;
  };
  if (out.type === 'text_response') return { kind: 'reply', text: shown(out.text) };
  if (out.type === 'clarification_needed')
    return { kind: 'clarify', question: shown(out.question), options: out.options };
  const proposals: ObservedProposal[] = [];
  for (const prop of out.proposals) {
    const v = decide(p, registry, prop, out.confidence, out.reasoning);
    // A name the directory does not know: the model is told and the person is asked who is meant (issue 40).
    if (v.guardian.action !== 'BLOCK' && v.unresolved.length > 0)
      return { kind: 'clarify', question: `(who is meant: ${v.unresolved[0]!.ref})`, options: v.unresolved[0]!.near };
    const params = v.parameters;
    const persons: Record<string, PersonReading[]> = {};
    for (const [name, role] of Object.entries(registry.meta(prop.toolName)?.paramRoles ?? {})) {
      // Every parameter that names a member (the person-scope roles; `task` names a task, not a person).
      if (!NAMED_PERSON_ROLES.has(role) || params[name] === undefined) continue;
      const refs = (Array.isArray(params[name]) ? (params[name] as unknown[]) : [params[name]]).filter(
        (x) => !isAllWord(x),
      );
      persons[name] = await Promise.all(
        refs.map(async (ref): Promise<PersonReading> => {
          const r = await resolvePerson({ db: p.db }, EVAL_ORG, String(ref));
          return r.status === 'found'
            ? { status: 'found', memberId: r.person.memberId }
            : r.status === 'ambiguous'
              ? { status: 'ambiguous', memberIds: r.candidates.map((x) => x.memberId) }
              : { status: 'not_found' };
        }),
      );
    }
    proposals.push({
      tool: prop.toolName,
      params,
      guardian: { action: v.guardian.action, reasonCode: v.guardian.reasonCode },
      auth: { result: v.auth.result, reasonCode: v.auth.reasonCode },
      persons,
    });
  }
  return { kind: 'tool', proposals };
}

function scoreFacts(p: PreparedCase, registry: ToolRegistry) {
  return {
    meta: (t: string) => registry.meta(t),
    memberWords: (id: string) => {
      const m = p.directory.members.find((x) => x.id === id);
      if (!m) return [id];
      // Words that single this member out: the full name, aliases no one else has, the department.
      const shared = (a: string) => p.directory.members.some((o) => o.id !== id && (o.aliases ?? []).includes(a));
      const dept = m.departmentId ? p.departments.get(m.departmentId) : undefined;
      const place = dept?.replace(/(営業課|課|部)$/, '');
      return [
        m.name ?? id,
        ...(m.aliases ?? []).filter((a) => !shared(a)).map((a) => a.replace(/(さん|様)$/, '')),
        ...(dept ? [dept] : []),
        ...(place ? [place] : []),
      ];
    },
    now: p.ctx.now,
    timezone: p.ctx.org.timezone,
    calendar: { closingDays: p.ctx.org.closingDays ?? [] },
  };
}

/** Hash of what the model is given besides the case: prompts and tool definitions. */
export function fingerprint(prompts: PromptSet, registry: ToolRegistry): string {
  const tools = registry.all().map((t) => anthropicTool(modelTool(t)));
  return createHash('sha256')
    .update(JSON.stringify({ persona: prompts.persona, rules: prompts.rules, guidance: prompts.guidance, tools }))
    .digest('hex')
    .slice(0, 12);
}
