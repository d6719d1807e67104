import { AppError } from '../core/app-error';
import type { TurnContext } from '../context/types';
import {
  toolCalls,
  type CacheTtl,
  type LlmClient,
  type LlmMessage,
  type LlmPart,
  type LlmRequest,
  type LlmResponse,
} from './llm-client';
import { parseModelOutput } from './output';
import { costUsd } from './pricing';
import { type PromptSet } from './prompts';
import { fill } from '../core/messages';
import { buildRequest, toolSet } from './request';
import { errorResults, type Continuation } from './continuation';
import { loadedTools, MAX_SEARCHES, SEARCH_TOOL, searchResults, type SearchRecord } from './tool-search';
import type { ToolSpec } from './tool-definitions';
import type { BrainOutput } from '../core/proposal';
import type { LlmCallRecord } from '../core/llm-usage';
import type { LlmJob, ModelRoute } from './routing';

export interface BrainDecision {
  output: BrainOutput;
  /** The assistant content to append when tool results are sent back (thinking included). */
  assistantContent: LlmResponse['content'];
  /**
   * The turns this decision added before its answer — tool searches and their results, guided retries — as they
   * happened: they go before `assistantContent` in the continuation (a loaded tool stays loaded, thinking blocks
   * stay where they were). Empty when the first answer was the decision.
   */
  lead?: Continuation;
  /** The tool searches of this decision (what was asked for, what was loaded). */
  searches?: SearchRecord[];
  calls: LlmCallRecord[];
  model: string;
  /**
   * The model and cache lifetime it was asked with: the further steps of the turn keep them. Absent for a decision
   * no model made (a call the person wrote in a form): the next step chooses as a turn would.
   */
  route?: ModelRoute;
  /** Why retries happened ("no_tool", "invalid: …", "max_tokens"), for the turn record. */
  retries: string[];
}

/** A failed decision still carries the calls made, so their cost is recorded. */
export class BrainFailure extends AppError {
  constructor(
    base: AppError,
    readonly calls: LlmCallRecord[],
    readonly retries: string[],
  ) {
    super(base.code, base.message, { cause: base.cause, retryAfterMs: base.retryAfterMs });
  }
}

/** Decides which model a call uses (routing rule, daily cost limit R-O5) and its prefix's lifetime, or refuses. */
export interface ModelSelector {
  select(job: LlmJob): Promise<{ model: string; cacheTtl?: CacheTtl } | { refuse: true }>;
}

export interface BrainOptions {
  llm: LlmClient;
  prompts: PromptSet;
  models: ModelSelector;
  maxTokens: number;
}

export interface DecideInput {
  ctx: TurnContext;
  /** Capabilities this sender may use: the core ones loaded, the others found with `find_tools`. */
  tools: readonly ToolSpec[];
  /** Names of capabilities this sender may not use (said in the context; the Gate refuses them). */
  restricted?: readonly string[];
  /** Previous steps of this turn (assistant tool calls and their results). */
  continuation?: Continuation;
  purpose?: string;
  /**
   * The model and cache lifetime of the turn this call continues (its tool loop, a rewrite of its answer): kept,
   * not chosen again — caches and thinking blocks are per model, and a turn under way finishes on its model.
   */
  route?: ModelRoute;
}

/**
 * The LLM Brain: asks the model for exactly one structured decision. A plain-text answer is re-asked once
 * with guidance, an invalid call is retried once with guidance, a `max_tokens` cut is retried once with
 * more room; after that it fails closed (R-B1, R-C3, R-B5). A tool search (`find_tools`) is answered here and the
 * model asked again, up to {@link MAX_SEARCHES} times: the decision is what it proposes with the tools it found.
 * It never executes anything.
 */
export class Brain {
  constructor(private readonly opts: BrainOptions) {}

  async decide(input: DecideInput): Promise<BrainDecision> {
    const calls: LlmCallRecord[] = [];
    const retries: string[] = [];
    const choice =
      input.route ??
      (await this.opts.models.select({
        purpose: input.purpose ?? 'turn',
        orgId: input.ctx.org.id,
        mayAct: input.tools.length > 0,
      }));
    if ('refuse' in choice)
      throw new BrainFailure(new AppError('LLM_COST_LIMIT', 'daily LLM cost limit reached'), calls, retries);
    const route: ModelRoute = { model: choice.model, cacheTtl: choice.cacheTtl ?? '5m' };
    const model = route.model;
    const base = input.continuation?.length ?? 0;
    let continuation: LlmMessage[] = [...(input.continuation ?? [])];
    let maxTokens = this.opts.maxTokens;
    let guidedRetryUsed = false;
    let maxTokensRetryUsed = false;
    const tools = toolSet(input.tools);
    const searches: SearchRecord[] = [];

    for (;;) {
      const req = decisionRequest(this.opts.prompts, { ...input, continuation }, model, maxTokens, route.cacheTtl);
      let res: LlmResponse;
      try {
        res = await this.opts.llm.create(req);
      } catch (err) {
        const app = err instanceof AppError ? err : new AppError('LLM_UNAVAILABLE', 'LLM call failed', { cause: err });
        throw new BrainFailure(app, calls, retries);
      }
      calls.push({
        model: res.model,
        purpose: input.purpose ?? 'turn',
        usage: res.usage,
        costUsd: costUsd(res.model, res.usage),
        durationMs: res.durationMs,
        requestId: res.requestId,
      });

      if (res.stopReason === 'max_tokens' || res.stopReason === 'context_window') {
        // Never act on a half-written tool call: discard it and ask again with more room.
        retries.push('max_tokens');
        if (maxTokensRetryUsed)
          throw new BrainFailure(
            new AppError('LLM_INVALID_OUTPUT', 'answer cut off twice (max_tokens)'),
            calls,
            retries,
          );
        maxTokensRetryUsed = true;
        maxTokens = Math.min(maxTokens * 2, 32000);
        continue;
      }
      if (res.stopReason === 'refusal') {
        throw new BrainFailure(new AppError('LLM_INVALID_OUTPUT', 'model refused'), calls, retries);
      }

      const uses = toolCalls(res.content);
      if (uses.some((u) => u.name === SEARCH_TOOL)) {
        calls.at(-1)!.purpose = 'tool_search';
        if (searches.length >= MAX_SEARCHES)
          throw new BrainFailure(
            new AppError('LLM_INVALID_OUTPUT', `more than ${MAX_SEARCHES} tool searches in one decision`),
            calls,
            retries,
          );
        const answered = searchResults(uses, tools.index, input.ctx.sender.level);
        searches.push(...answered.searches);
        continuation = [
          ...continuation,
          { role: 'assistant', content: res.content },
          { role: 'user', content: answered.results },
        ];
        continue;
      }

      const parsed = notLoaded(parseModelOutput(res.content), tools.deferred, loadedTools(continuation));
      if (parsed.ok)
        return {
          output: parsed.output,
          assistantContent: res.content,
          lead: continuation.slice(base),
          searches,
          calls,
          model,
          route,
          retries,
        };

      retries.push(parsed.problem === 'no_tool' ? 'no_tool' : `invalid: ${parsed.detail}`);
      if (guidedRetryUsed) {
        throw new BrainFailure(
          new AppError(
            'LLM_INVALID_OUTPUT',
            `unusable model output after guided retry (${parsed.problem}: ${parsed.detail})`,
          ),
          calls,
          retries,
        );
      }
      guidedRetryUsed = true;
      continuation = [...continuation, ...guidanceTurns(this.opts.prompts, res.content, parsed.problem, parsed.detail)];
    }
  }
}

/**
 * The model request of one decision, from the brain's input: the one place it is built, for the service
 * and for the evaluation set (`eval/`), so the evaluation measures what the service sends.
 */
export function decisionRequest(
  prompts: PromptSet,
  input: Pick<DecideInput, 'ctx' | 'tools' | 'restricted' | 'continuation'>,
  model: string,
  maxTokens: number,
  cacheTtl?: CacheTtl,
): LlmRequest {
  return buildRequest({
    cacheTtl,
    prompts,
    ctx: input.ctx,
    tools: input.tools,
    restricted: input.restricted,
    model,
    maxTokens,
    continuation: input.continuation,
  });
}

/**
 * A proposal of a deferred tool the turn has not loaded is not accepted (the model can only know such a tool from
 * a search; a request whose history calls a tool the model was never shown is not one to send): the model is
 * asked again, told to find it first.
 */
function notLoaded(
  parsed: ReturnType<typeof parseModelOutput>,
  deferred: ReadonlySet<string>,
  loaded: ReadonlySet<string>,
): ReturnType<typeof parseModelOutput> {
  if (!parsed.ok || parsed.output.type !== 'tool_call') return parsed;
  const missing = parsed.output.proposals.map((p) => p.toolName).filter((n) => deferred.has(n) && !loaded.has(n));
  if (missing.length === 0) return parsed;
  return {
    ok: false,
    problem: 'invalid',
    detail: `${missing.join(', ')} is not loaded: find it with find_tools first`,
  };
}

/** Appends the bad answer and a correction, keeping tool call / result pairing valid. */
function guidanceTurns(
  p: PromptSet,
  content: readonly LlmPart[],
  problem: 'no_tool' | 'invalid',
  detail: string,
): LlmMessage[] {
  const text =
    problem === 'no_tool'
      ? (p.guidance.retry_no_tool ?? '')
      : fill(p.guidance.retry_invalid ?? '', { problem: detail });
  const uses = toolCalls(content);
  const assistant: LlmMessage = { role: 'assistant', content };
  if (uses.length === 0) return [assistant, { role: 'user', content: text }];
  return [assistant, { role: 'user', content: errorResults(uses, text) }];
}
