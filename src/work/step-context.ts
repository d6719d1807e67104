/**
 * The step context of background work (seed 002 §7.2): the small memo carried from one PDCA step to the
 * next and persisted after every step — never the whole conversation. Pure functions only.
 */

/** Longest text kept per entry (details belong in artifacts). */
const TEXT_MAX = 300;
/** Most entries kept per list (the oldest go first). */
const LIST_MAX = 12;

export interface CompletedStep {
  n: number;
  /** The brain's account of the step (its answer after the step's calls). */
  result: string;
  /** The calls the step made, with how each went. */
  tools: { tool: string; status: string }[];
}

export interface StepContext {
  facts: string[];
  open_issues: string[];
  plan: string[];
  completed_steps: CompletedStep[];
  last_result: string | null;
  artifact_refs: string[];
  budget: { remaining_steps: number; spent_steps: number; remaining_cost_usd: number; deadline: string | null };
  /** The step being retried after a failure (a second failure stops the work). */
  failure: { step: number; count: number; reason: string } | null;
}

/** What a work row holds of its budget (null: not yet applied). */
export interface WorkBudget {
  maxSteps: number | null;
  maxCostUsd: number | null;
  deadlineAt: Date | null;
  stepsDone: number;
  costUsd: number;
}

/** Which limit of the budget is used up, or null while there is budget left. */
export type BudgetLimit = 'steps' | 'cost' | 'time';

export function clip(text: string, max = TEXT_MAX): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

function keep<T>(list: T[]): T[] {
  return list.slice(-LIST_MAX);
}

/** The context a new work item starts with: the plan the brain gave when it started the work. */
export function initialContext(plan: readonly string[]): StepContext {
  return {
    facts: [],
    open_issues: [],
    plan: keep(plan.map((p) => clip(p)).filter(Boolean)),
    completed_steps: [],
    last_result: null,
    artifact_refs: [],
    budget: { remaining_steps: 0, spent_steps: 0, remaining_cost_usd: 0, deadline: null },
    failure: null,
  };
}

/** A stored context read back (rows written by older code, or `{}`, get the missing parts). */
export function readContext(stored: unknown): StepContext {
  const s = (stored && typeof stored === 'object' ? stored : {}) as Partial<StepContext>;
  const base = initialContext([]);
  return {
    ...base,
    ...s,
    facts: Array.isArray(s.facts) ? s.facts : [],
    open_issues: Array.isArray(s.open_issues) ? s.open_issues : [],
    plan: Array.isArray(s.plan) ? s.plan : [],
    completed_steps: Array.isArray(s.completed_steps) ? s.completed_steps : [],
    artifact_refs: Array.isArray(s.artifact_refs) ? s.artifact_refs : [],
    budget: { ...base.budget, ...(s.budget ?? {}) },
    failure: s.failure ?? null,
  };
}

/** The used-up limit, if any: steps, LLM cost, or wall time (checked before every step). */
export function exhausted(b: WorkBudget, now: Date): BudgetLimit | null {
  if (b.maxSteps !== null && b.stepsDone >= b.maxSteps) return 'steps';
  if (b.maxCostUsd !== null && b.costUsd >= b.maxCostUsd) return 'cost';
  if (b.deadlineAt !== null && now.getTime() >= b.deadlineAt.getTime()) return 'time';
  return null;
}

/** The context's budget line brought up to date with the row's counters. */
export function withBudget(c: StepContext, b: WorkBudget): StepContext {
  return {
    ...c,
    budget: {
      remaining_steps: Math.max(0, (b.maxSteps ?? 0) - b.stepsDone),
      spent_steps: b.stepsDone,
      remaining_cost_usd: Math.max(0, Number(((b.maxCostUsd ?? 0) - b.costUsd).toFixed(4))),
      deadline: b.deadlineAt ? b.deadlineAt.toISOString() : null,
    },
  };
}

/** What one finished step adds: its result, the facts its calls produced, the artifacts it wrote. */
export interface StepOutcome {
  n: number;
  result: string;
  tools: { tool: string; status: string }[];
  facts: string[];
  artifactIds: string[];
}

/** The context after a finished step: the step recorded, the plan's first item done, no failure pending. */
export function afterStep(c: StepContext, s: StepOutcome): StepContext {
  return {
    ...c,
    facts: keep([...c.facts, ...s.facts.map((f) => clip(f))]),
    plan: c.plan.slice(1),
    completed_steps: keep([...c.completed_steps, { n: s.n, result: clip(s.result), tools: s.tools }]),
    last_result: clip(s.result),
    artifact_refs: keep([...c.artifact_refs, ...s.artifactIds]),
    failure: null,
  };
}

/** The context after a failed attempt at step `n`: counted, with the reason as an open issue. */
export function afterFailure(c: StepContext, n: number, reason: string): StepContext {
  const count = c.failure?.step === n ? c.failure.count + 1 : 1;
  return {
    ...c,
    open_issues: keep([...c.open_issues, clip(`step ${n}: ${reason}`)]),
    last_result: clip(reason),
    failure: { step: n, count, reason: clip(reason) },
  };
}

/** The context as lines for the brain (quoted data in the user turn, never instructions). */
export function contextLines(c: StepContext, goal: string): string[] {
  const lines = [`goal: ${clip(goal)}`];
  const b = c.budget;
  lines.push(
    `budget: ${b.spent_steps} steps done, ${b.remaining_steps} left, $${b.remaining_cost_usd} LLM cost left` +
      (b.deadline ? `, until ${b.deadline}` : ''),
  );
  for (const p of c.plan) lines.push(`plan: ${p}`);
  for (const s of c.completed_steps) {
    const tools = s.tools.map((t) => `${t.tool}=${t.status}`).join(', ');
    lines.push(`done step ${s.n}${tools ? ` (${tools})` : ''}: ${s.result}`);
  }
  for (const f of c.facts) lines.push(`fact: ${f}`);
  for (const q of c.open_issues) lines.push(`open issue: ${q}`);
  for (const a of c.artifact_refs) lines.push(`artifact: ${a}`);
  if (c.last_result) lines.push(`last result: ${c.last_result}`);
  return lines;
}
