import { createHash } from 'node:crypto';
import { z } from 'zod';
import { newErrorId } from '../errors/app-error';
import { ClarificationNeeded } from './clarification';
import type { ToolRegistry } from './registry';
import { ToolError, type ToolContext } from './types';

/** What running a proposal produced (R-T3). */
export type ExecutionResult =
  | { status: 'ok'; output: unknown; ms: number }
  /** Bad input or a handler's own ToolError: safe to show to the model. */
  | { status: 'error'; modelMessage: string; code: string; ms: number }
  /** The handler needs a choice from the person; nothing was done. */
  | { status: 'clarify'; question: string; questionEn?: string; options: string[]; ms: number }
  /** Anything else: internal, never shown. */
  | { status: 'internal_error'; errorId: string; internal: string; ms: number };

const DEFAULT_TIMEOUT_MS = 15000;

/** JSON with sorted object keys: equal values give equal text. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v as Record<string, unknown>).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * The idempotency key of one proposal within a turn: the work item, the tool and a hash of its exact
 * parameters. A retried turn that proposes the same call gets the same key (handlers then do nothing
 * twice); a different call never inherits another's key.
 */
export function proposalKey(scope: string, toolName: string, params: unknown): string {
  return `${scope}:${toolName}:${createHash('sha256').update(canonicalJson(params)).digest('hex').slice(0, 16)}`;
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
    // The key names the tool and its exact parameters (see proposalKey); only successes are reused,
    // so a failed or timed-out call can run again on a retry.
    const key = `${name}|${ctx.idempotencyKey}|${canonicalJson(params)}`;
    const cached = this.memo.get(key);
    if (cached) return cached;
    const result = await this.runOnce(name, params, ctx);
    if (result.status === 'ok') {
      if (this.memo.size > 5000) this.memo.clear();
      this.memo.set(key, result);
    }
    return result;
  }

  private async runOnce(name: string, params: unknown, ctx: ToolContext): Promise<ExecutionResult> {
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    const def = this.registry.get(name);
    if (!def || !def.enabled) return { status: 'error', code: 'UNKNOWN_TOOL', modelMessage: `Unknown tool "${name}".`, ms: ms() };
    const input = def.input.safeParse(params);
    if (!input.success) {
      return { status: 'error', code: 'INVALID_INPUT', modelMessage: `Invalid parameters: ${input.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ')}`, ms: ms() };
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      const raw = await Promise.race([
        def.handler(input.data, ctx),
        new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new ToolError('The operation took too long and was stopped.', 'TIMEOUT')), def.timeoutMs ?? DEFAULT_TIMEOUT_MS); }),
      ]);
      const out = def.output.safeParse(raw);
      if (!out.success) {
        return { status: 'internal_error', errorId: newErrorId(), internal: `output of ${name} failed validation: ${z.prettifyError(out.error).slice(0, 300)}`, ms: ms() };
      }
      return { status: 'ok', output: out.data, ms: ms() };
    } catch (err) {
      if (err instanceof ClarificationNeeded) return { status: 'clarify', question: err.questionJa, questionEn: err.questionEn, options: err.options, ms: ms() };
      if (err instanceof ToolError) return { status: 'error', code: err.code, modelMessage: err.message, ms: ms() };
      return { status: 'internal_error', errorId: newErrorId(), internal: `${name}: ${err instanceof Error ? err.name : 'error'}`, ms: ms() };
    } finally {
      clearTimeout(timer);
    }
  }
}
