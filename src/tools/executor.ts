import { z } from 'zod';
import { newErrorId } from '../core/app-error';
import { ClarificationNeeded } from './clarification';
import { genericEffect } from './describe';
import type { ToolRegistry } from './registry';
import {
  ToolError,
  type DescribeContext,
  type EffectDescription,
  type ToolContext,
  type ToolDefinition,
} from './types';

/** Why a call did not (or could not) run; the same for running and for describing it. */
export type CallFailure =
  /** Bad input or a handler's own ToolError: safe to show to the model. */
  | { status: 'error'; modelMessage: string; code: string; ms: number }
  /** The handler needs a choice from the person; nothing was done. */
  | { status: 'clarify'; question: string; questionEn?: string; options: string[]; ms: number }
  /** Anything else: internal, never shown. */
  | { status: 'internal_error'; errorId: string; internal: string; ms: number };

/** What running a proposal produced (R-T3). */
export type ExecutionResult = { status: 'ok'; output: unknown; ms: number } | CallFailure;

/** What describing a proposal produced: the effect to confirm, or why it cannot be confirmed. */
export type DescribeResult =
  { status: 'ok'; effect: EffectDescription; params: Record<string, unknown>; ms: number } | CallFailure;

const DEFAULT_TIMEOUT_MS = 15000;

/** JSON with sorted object keys: equal values give equal text. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v as Record<string, unknown>)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * The idempotency key of a call by where it comes from (issue 7): the work item (or pending action), the
 * tool, and which call of that tool it is in the turn (0, 1, …). Not the parameters: a retried turn whose
 * model rewords the title gets the same key, so the handler returns what the first attempt did instead
 * of doing it twice; two calls of one tool in a turn get different keys.
 */
export function originKey(origin: string, toolName: string, nth = 0): string {
  return `${origin}:${toolName}#${nth}`;
}

/**
 * Runs a capability: validates input (after any Guardian MODIFY), runs with a timeout, validates output,
 * and maps failures to two channels — messages for the model, and internal errors (logged by id only).
 * Results are memoised per idempotency key, so a repeated proposal in one turn runs once.
 */
export class ToolExecutor {
  private readonly memo = new Map<string, ExecutionResult>();

  constructor(private readonly registry: ToolRegistry) {}

  async run(name: string, params: unknown, ctx: ToolContext): Promise<ExecutionResult> {
    // The key names the call's origin (see originKey); only successes are reused, so a failed or
    // timed-out call can run again on a retry.
    const key = `${name}|${ctx.idempotencyKey}`;
    const cached = this.memo.get(key);
    if (cached) return cached;
    const result = await this.runOnce(name, params, ctx);
    if (result.status === 'ok') {
      if (this.memo.size > 5000) this.memo.clear();
      this.memo.set(key, result);
    }
    return result;
  }

  /**
   * States what a call would do, from its validated input (the tool's `describe`, else its parameters),
   * without running it. Bad input, an unknown person or an ambiguous name fail as running would.
   */
  async describe(name: string, params: unknown, ctx: DescribeContext): Promise<DescribeResult> {
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    const checked = this.validate(name, params, ms);
    if ('status' in checked) return checked;
    const { def, input } = checked;
    try {
      const effect = def.describe
        ? await def.describe(input, ctx)
        : genericEffect(name, input as Record<string, unknown>, ctx.lang);
      return { status: 'ok', effect, params: input as Record<string, unknown>, ms: ms() };
    } catch (err) {
      return this.failure(name, err, ms());
    }
  }

  private validate(
    name: string,
    params: unknown,
    ms: () => number,
  ): { def: ToolDefinition; input: unknown } | CallFailure {
    const def = this.registry.get(name);
    if (!def || !def.enabled)
      return { status: 'error', code: 'UNKNOWN_TOOL', modelMessage: `Unknown tool "${name}".`, ms: ms() };
    const input = def.input.safeParse(params);
    if (!input.success) {
      const issues = input.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join('.') || '(root)'} ${i.message}`)
        .join('; ');
      return { status: 'error', code: 'INVALID_INPUT', modelMessage: `Invalid parameters: ${issues}`, ms: ms() };
    }
    return { def, input: input.data };
  }

  private failure(name: string, err: unknown, ms: number): CallFailure {
    if (err instanceof ClarificationNeeded) {
      return { status: 'clarify', question: err.questionJa, questionEn: err.questionEn, options: err.options, ms };
    }
    if (err instanceof ToolError) return { status: 'error', code: err.code, modelMessage: err.message, ms };
    const internal = `${name}: ${err instanceof Error ? err.name : 'error'}`;
    return { status: 'internal_error', errorId: newErrorId(), internal, ms };
  }

  private async runOnce(name: string, params: unknown, ctx: ToolContext): Promise<ExecutionResult> {
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    const checked = this.validate(name, params, ms);
    if ('status' in checked) return checked;
    const { def, input } = checked;
    let timer: NodeJS.Timeout | undefined;
    try {
      const raw = await Promise.race([
        def.handler(input, ctx),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new ToolError('The operation took too long and was stopped.', 'TIMEOUT')),
            def.timeoutMs ?? DEFAULT_TIMEOUT_MS,
          );
        }),
      ]);
      const out = def.output.safeParse(raw);
      if (!out.success) {
        return {
          status: 'internal_error',
          errorId: newErrorId(),
          internal: `output of ${name} failed validation: ${z.prettifyError(out.error).slice(0, 300)}`,
          ms: ms(),
        };
      }
      return { status: 'ok', output: out.data, ms: ms() };
    } catch (err) {
      return this.failure(name, err, ms());
    } finally {
      clearTimeout(timer);
    }
  }
}
