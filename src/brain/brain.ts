import { AppError } from '../core/app-error';
import type { TurnContext } from '../context/types';
import {
  toolCalls,
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
import { buildRequest } from './request';
import { errorResults, type Continuation } from './continuation';
import type { ToolSpec } from './tool-definitions';
import type { BrainOutput } from '../core/proposal';
import type { LlmCallRecord } from '../core/llm-usage';

export interface BrainDecision {
  output: BrainOutput;
  /** The assistant content to append when tool results are sent back (thinking included). */
  assistantContent: LlmResponse['content'];
  calls: LlmCallRecord[];
  model: string;
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

/** Decides which model to use now, or refuses (daily cost limit, R-O5). */
export interface ModelSelector {
  select(): Promise<{ model: string } | { refuse: true }>;
}

export interface BrainOptions {
  llm: LlmClient;
  prompts: PromptSet;
  models: ModelSelector;
  maxTokens: number;
}

export interface DecideInput {
  ctx: TurnContext;
  /** Capabilities offered (the same for every member of an organisation). */
  tools: readonly ToolSpec[];
  /** Names of offered capabilities this sender may not use (said in the context; the Gate refuses them). */
  restricted?: readonly string[];
  /** Previous steps of this turn (assistant tool calls and their results). */
  continuation?: Continuation;
  purpose?: string;
}

/**
 * The LLM Brain: asks the model for exactly one structured decision. A plain-text answer is re-asked once
 * with guidance, an invalid call is retried once with guidance, a `max_tokens` cut is retried once with
 * more room; after that it fails closed (R-B1, R-C3, R-B5). It never executes anything.
 */
export class Brain {
  constructor(private readonly opts: BrainOptions) {}

  async decide(input: DecideInput): Promise<BrainDecision> {
    const calls: LlmCallRecord[] = [];
    const retries: string[] = [];
    const choice = await this.opts.models.select();
    if ('refuse' in choice)
      throw new BrainFailure(new AppError('LLM_COST_LIMIT', 'daily LLM cost limit reached'), calls, retries);
    const model = choice.model;
    let continuation: LlmMessage[] = [...(input.continuation ?? [])];
    let maxTokens = this.opts.maxTokens;
    let guidedRetryUsed = false;
    let maxTokensRetryUsed = false;

    for (;;) {
      const req = decisionRequest(this.opts.prompts, { ...input, continuation }, model, maxTokens);
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

      const parsed = parseModelOutput(res.content);
      if (parsed.ok) return { output: parsed.output, assistantContent: res.content, calls, model, retries };

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
): LlmRequest {
  return buildRequest({
    prompts,
    ctx: input.ctx,
    tools: input.tools,
    restricted: input.restricted,
    model,
    maxTokens,
    continuation: input.continuation,
  });
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
