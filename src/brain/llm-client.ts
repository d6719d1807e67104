import Anthropic from '@anthropic-ai/sdk';
import { AppError } from '../errors/app-error';
import type { TokenUsage } from '../core/llm-usage';

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
 * The Anthropic SDK behind the LlmClient port. The SDK owns retries for 408/409/429/5xx/529 (with
 * `retry-after` and jittered backoff, bounded by `maxRetries`) and the request timeout; this class
 * streams the answer (so a long answer is not cut by proxies), and maps failures to AppErrors whose
 * messages carry the request id and type, never the key.
 */
export class AnthropicLlmClient implements LlmClient {
  private readonly sdk: Anthropic;

  constructor(private readonly opts: AnthropicClientOptions) {
    this.sdk = new Anthropic({
      apiKey: opts.apiKey,
      baseURL: opts.baseURL,
      timeout: opts.timeoutMs,
      maxRetries: opts.maxRetries,
    });
  }

  async create(req: LlmRequest): Promise<LlmResponse> {
    const started = performance.now();
    try {
      const stream = this.sdk.messages.stream(req as Anthropic.Messages.MessageStreamParams);
      const msg = await stream.finalMessage();
      const u = msg.usage;
      return {
        content: msg.content,
        stopReason: msg.stop_reason,
        model: msg.model ?? req.model,
        requestId: stream.request_id ?? undefined,
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
