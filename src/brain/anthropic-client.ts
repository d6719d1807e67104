import Anthropic from '@anthropic-ai/sdk';
import { AppError } from '../core/app-error';
import type {
  CacheTtl,
  LlmClient,
  LlmMessage,
  LlmPart,
  LlmRequest,
  LlmResponse,
  LlmStopReason,
  LlmTool,
} from './llm-client';
import { nodeFetch } from './node-fetch';

/**
 * The Anthropic adapter of the LlmClient port: the one file that speaks the Messages API (SDK types, content
 * blocks, `cache_control`). It turns Hisho's neutral requests into the API's body and the API's answers back.
 */

/** The Messages API body the adapter sends (API 2026-10-21; no sampling parameters). */
export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  tools: Anthropic.Messages.Tool[];
  tool_choice: { type: 'auto'; disable_parallel_tool_use?: boolean };
  system: Anthropic.Messages.TextBlockParam[];
  messages: Anthropic.Messages.MessageParam[];
}

/** The cache breakpoints of each lifetime (one object each, so the body of a prefix is byte-identical). */
const EPHEMERAL: Record<CacheTtl, Anthropic.Messages.CacheControlEphemeral> = {
  '5m': { type: 'ephemeral' },
  '1h': { type: 'ephemeral', ttl: '1h' },
};

const toolCache = new WeakMap<LlmTool, Anthropic.Messages.Tool>();
const listCache: Record<CacheTtl, WeakMap<readonly LlmTool[], Anthropic.Messages.Tool[]>> = {
  '5m': new WeakMap(),
  '1h': new WeakMap(),
};

/** The API's definition of a tool (one object per neutral tool, so the cached prefix stays byte-identical). */
export function anthropicTool(t: LlmTool): Anthropic.Messages.Tool {
  let tool = toolCache.get(t);
  if (!tool) {
    tool = {
      name: t.name,
      description: t.description,
      ...(t.strict !== undefined ? { strict: t.strict } : {}),
      input_schema: t.inputSchema as Anthropic.Messages.Tool['input_schema'],
      ...(t.deferred ? { defer_loading: true } : {}),
    };
    toolCache.set(t, tool);
  }
  return tool;
}

/**
 * A tool list with the cache breakpoint on its last loaded tool (deferred tools are not part of the prompt, so
 * not of the cached prefix); built once per list and lifetime (the brain reuses its lists).
 */
function cachedToolList(tools: readonly LlmTool[], ttl: CacheTtl): Anthropic.Messages.Tool[] {
  let list = listCache[ttl].get(tools);
  if (!list) {
    const last = tools.findLastIndex((t) => !t.deferred);
    const mark = EPHEMERAL[ttl];
    list = tools.map((t, i) => (i === last ? { ...anthropicTool(t), cache_control: mark } : anthropicTool(t)));
    listCache[ttl].set(tools, list);
  }
  return list;
}

function wirePart(p: LlmPart): Anthropic.Messages.ContentBlockParam {
  switch (p.type) {
    case 'text':
      return { type: 'text', text: p.text };
    case 'tool_call':
      return { type: 'tool_use', id: p.id, name: p.name, input: p.input };
    case 'tool_result':
      return {
        type: 'tool_result',
        tool_use_id: p.callId,
        // A tool search's result is the `tool_reference` blocks of the tools it loads, nothing else.
        content: p.loads?.length ? p.loads.map((name) => ({ type: 'tool_reference', tool_name: name })) : p.content,
        ...(p.isError ? { is_error: true } : {}),
      };
    case 'thinking':
      return { type: 'thinking', thinking: p.text, signature: p.signature };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: p.data };
  }
}

function wireMessage(m: LlmMessage): Anthropic.Messages.MessageParam {
  return { role: m.role, content: typeof m.content === 'string' ? m.content : m.content.map(wirePart) };
}

/**
 * The Messages API body of a neutral request. Order: tools (a cache breakpoint on the last loaded one when
 * `cachePrefix`; deferred tools, `defer_loading: true`, after it) → system (a breakpoint when `cachePrefix`) →
 * messages; `tool_choice: auto` (forced tool use is rejected by current models). No beta header: deferred
 * tools and `tool_reference` blocks are part of API version 2026-10-21 (SDK 1.12 types them without a beta).
 * Two breakpoints of one lifetime (`cacheTtl`, default 5 minutes): within the API's four, and no shorter-lived
 * breakpoint before a longer-lived one (PLATFORMS.md C5).
 */
export function toAnthropicRequest(req: LlmRequest): AnthropicRequest {
  const ttl = req.cacheTtl ?? '5m';
  return {
    model: req.model,
    max_tokens: req.maxTokens,
    tools: req.cachePrefix ? cachedToolList(req.tools, ttl) : req.tools.map(anthropicTool),
    tool_choice: { type: 'auto' },
    system: [{ type: 'text', text: req.system, ...(req.cachePrefix ? { cache_control: EPHEMERAL[ttl] } : {}) }],
    messages: req.messages.map(wireMessage),
  };
}

/** The answer's blocks in neutral parts (blocks the brain does not use, e.g. server tool results, are left out). */
export function fromAnthropicContent(content: readonly Anthropic.Messages.ContentBlock[]): LlmResponse['content'] {
  const out: LlmResponse['content'] = [];
  for (const b of content) {
    if (b.type === 'text') out.push({ type: 'text', text: b.text });
    else if (b.type === 'tool_use') out.push({ type: 'tool_call', id: b.id, name: b.name, input: b.input });
    else if (b.type === 'thinking') out.push({ type: 'thinking', text: b.thinking, signature: b.signature });
    else if (b.type === 'redacted_thinking') out.push({ type: 'redacted_thinking', data: b.data });
  }
  return out;
}

const STOP_REASONS: Record<string, LlmStopReason> = {
  end_turn: 'end_turn',
  stop_sequence: 'end_turn',
  tool_use: 'tool_calls',
  max_tokens: 'max_tokens',
  model_context_window_exceeded: 'context_window',
  refusal: 'refusal',
};

/** The API's stop reason in neutral terms (unknown ones, e.g. `pause_turn`, are `other`). */
export function stopReasonOf(r: string | null): LlmStopReason | null {
  return r === null ? null : (STOP_REASONS[r] ?? 'other');
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
      // The SDK's own span per call is off: Hisho's `chat` span (`traced-llm-client.ts`) is the one per model call,
      // with the cost and the conventions' token counts (the SDK counts cached tokens into its input tokens and
      // names cache writes differently), so a dashboard that sums the tokens of `chat` spans does not count twice.
      // The HTTP instrumentation still makes a span per attempt and sends the trace context.
      openTelemetry: false,
    });
  }

  async create(neutral: LlmRequest): Promise<LlmResponse> {
    const started = performance.now();
    const req = toAnthropicRequest(neutral);
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
        content: fromAnthropicContent(msg.content),
        stopReason: stopReasonOf(msg.stop_reason),
        model: msg.model ?? req.model,
        requestId: requestId ?? undefined,
        durationMs: Math.round(performance.now() - started),
        usage: {
          inputTokens: u.input_tokens ?? 0,
          outputTokens: u.output_tokens ?? 0,
          cacheWriteTokens: u.cache_creation_input_tokens ?? 0,
          cacheReadTokens: u.cache_read_input_tokens ?? 0,
          ...(u.cache_creation?.ephemeral_1h_input_tokens
            ? { cacheWrite1hTokens: u.cache_creation.ephemeral_1h_input_tokens }
            : {}),
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
