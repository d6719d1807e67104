import Anthropic from '@anthropic-ai/sdk';
import { AppError } from '../errors/app-error';
import type { TokenUsage } from '../core/llm-usage';
import { nodeFetch } from './node-fetch';

/** The request the brain sends (Anthropic Messages API shape; no sampling parameters, API 2026-10-21). */
export interface LlmRequest {
  model: string;
  max_tokens: number;
  system: Anthropic.Messages.TextBlockParam[];
  tools: Anthropic.Messages.Tool[];
  tool_choice: { type: 'auto'; disable_parallel_tool_use?: boolean };
  messages: Anthropic.Messages.MessageParam[];
}

export interface LlmResponse {
  content: Anthropic.Messages.ContentBlock[];
  stopReason: string | null;
  usage: TokenUsage;
  model: string;
  requestId?: string;
  durationMs: number;
}

/** The brain's only way to reach a model (swappable for a scripted fake in tests and benchmarks). */
export interface LlmClient {
  create(req: LlmRequest): Promise<LlmResponse>;
}

export interface AnthropicClientOptions {
  apiKey: string;
  baseURL?: string;
  timeoutMs: number;
  maxRetries: number;
}

/**
 * Answers of up to this many tokens are asked for in one plain request; larger ones are streamed. A
 * plain request costs the worker less CPU (one JSON parse instead of the SDK's event-stream machinery and
 * its re-parsing of partial tool input: 0.5 ms a call, issue 10), and an 8,192-token answer comes well
 * within the SDK's limit for unstreamed requests (about 21,000 tokens, "operations that may take longer
 * than 10 minutes"). The default budget is 4,096; the one retry after a cut answer doubles it.
 */
export const STREAM_ABOVE_TOKENS = 8192;

/**
 * The Anthropic SDK behind the LlmClient port. The SDK owns retries for 408/409/429/5xx/529 (with
 * `retry-after` and jittered backoff, bounded by `maxRetries`) and the request timeout; this class asks
 * for short answers in one request and streams long ones ({@link STREAM_ABOVE_TOKENS}), sends them over
 * node:http's keep-alive agents ({@link nodeFetch}), and maps failures to AppErrors whose messages carry
 * the request id and type, never the key.
 */
export class AnthropicLlmClient implements LlmClient {
  private readonly sdk: Anthropic;

  constructor(private readonly opts: AnthropicClientOptions) {
    this.sdk = new Anthropic({
      apiKey: opts.apiKey,
      baseURL: opts.baseURL,
      timeout: opts.timeoutMs,
      maxRetries: opts.maxRetries,
      fetch: nodeFetch,
    });
  }

  async create(req: LlmRequest): Promise<LlmResponse> {
    const started = performance.now();
    try {
      let msg: Anthropic.Messages.Message;
      let requestId: string | null | undefined;
      if (req.max_tokens > STREAM_ABOVE_TOKENS) {
        const stream = this.sdk.messages.stream(req as Anthropic.Messages.MessageStreamParams);
        msg = await stream.finalMessage();
        requestId = stream.request_id;
      } else {
        const answer = await this.sdk.messages.create({ ...req, stream: false }).withResponse();
        msg = answer.data;
        requestId = answer.request_id;
      }
      const u = msg.usage;
      return {
        content: msg.content,
        stopReason: msg.stop_reason,
        model: msg.model ?? req.model,
        requestId: requestId ?? undefined,
        durationMs: Math.round(performance.now() - started),
        usage: {
          inputTokens: u.input_tokens ?? 0,
          outputTokens: u.output_tokens ?? 0,
          cacheWriteTokens: u.cache_creation_input_tokens ?? 0,
          cacheReadTokens: u.cache_read_input_tokens ?? 0,
        },
      };
    } catch (err) {
      throw mapLlmError(err);
    }
  }
}

/** SDK errors → AppError codes (R-B5). Never includes request bodies or credentials. */
export function mapLlmError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { status?: number; type?: string; requestID?: string; headers?: Headers };
  const ref = `status=${e.status ?? 'none'} type=${e.type ?? 'none'} request_id=${e.requestID ?? 'none'}`;
  if (err instanceof Anthropic.APIConnectionTimeoutError)
    return new AppError('LLM_TIMEOUT', `LLM timeout (${ref})`, { cause: err });
  if (err instanceof Anthropic.RateLimitError) {
    const ra = Number(e.headers?.get?.('retry-after'));
    return new AppError('LLM_RATE_LIMITED', `LLM rate limited (${ref})`, {
      cause: err,
      retryAfterMs: Number.isFinite(ra) ? ra * 1000 : undefined,
    });
  }
  if (err instanceof Anthropic.InternalServerError || err instanceof Anthropic.APIConnectionError) {
    return new AppError('LLM_UNAVAILABLE', `LLM unavailable (${ref})`, { cause: err });
  }
  if (err instanceof Anthropic.AuthenticationError || err instanceof Anthropic.PermissionDeniedError) {
    return new AppError('LLM_NOT_CONFIGURED', `LLM credentials rejected (${ref})`, { cause: err });
  }
  if (err instanceof Anthropic.APIError) {
    // A mid-stream `event: error` (e.g. overloaded_error) arrives with no status.
    if (e.status === undefined && (e.type === 'overloaded_error' || e.type === 'api_error')) {
      return new AppError('LLM_UNAVAILABLE', `LLM stream error (${ref})`, { cause: err });
    }
    return new AppError('LLM_UNAVAILABLE', `LLM request failed (${ref})`, { cause: err });
  }
  const name = err instanceof Error ? err.name : 'unknown';
  return new AppError('LLM_UNAVAILABLE', `LLM call failed (${name})`, { cause: err });
}
