import type { TokenUsage } from '../core/llm-usage';

/**
 * The LlmClient port: how the brain reaches a model, in Hisho's own terms (messages, tool calls, tool
 * results, usage, why the model stopped). No provider's wire format crosses it: the Anthropic Messages API
 * (content blocks, `cache_control`, `tool_use_id`) is spoken only in anthropic-client.ts.
 */

/** A capability or meta-tool the model may call: its name, what it is for and its input's JSON schema. */
export interface LlmTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The model must keep to the schema exactly (closed schemas only). */
  strict?: boolean;
  /**
   * Not shown to the model until a tool result loads it ({@link LlmToolResult.loads}): sent, but outside the
   * cached prefix (tool search, decision record 0010).
   */
  deferred?: boolean;
}

/** Words. */
export interface LlmText {
  type: 'text';
  text: string;
}

/** The model calls a tool (`id` pairs the call with its result). */
export interface LlmToolCall {
  type: 'tool_call';
  id: string;
  name: string;
  input: unknown;
}

/**
 * What a tool call produced, as the model hears it (JSON text or a short error message). A tool search's result
 * `loads` deferred tools instead: the model then sees their definitions (`content` says the same in words, for
 * a request in which those tools are not offered).
 */
export interface LlmToolResult {
  type: 'tool_result';
  callId: string;
  content: string;
  isError?: boolean;
  loads?: readonly string[];
}

/** The model's own reasoning before it answers, handed back unchanged when the turn goes on. */
export type LlmThinking =
  { type: 'thinking'; text: string; signature: string } | { type: 'redacted_thinking'; data: string };

/** One part of a message. The model's answers hold text, tool calls and thinking; tool results come from us. */
export type LlmPart = LlmText | LlmToolCall | LlmToolResult | LlmThinking;

/** A turn of the conversation. The first message is the user's; roles alternate. */
export interface LlmMessage {
  role: 'user' | 'assistant';
  content: string | readonly LlmPart[];
}

/** One request to the model. No sampling parameters: the model's defaults apply. */
export interface LlmRequest {
  model: string;
  maxTokens: number;
  /** The instructions (persona, rules, the organisation). */
  system: string;
  /** Offered tools, in the order given (the model decides whether to call one); deferred ones last. */
  tools: readonly LlmTool[];
  messages: readonly LlmMessage[];
  /**
   * The tools and the system text are the same for many requests: let the provider cache them as a prefix
   * (prompt caching, R-B4). They must then be byte-identical between requests.
   */
  cachePrefix?: boolean;
  /**
   * How long the cached prefix lives after its last use: 5 minutes (written at 1.25× input) or an hour (2×);
   * chosen per organisation from its traffic (cache-lifetime.ts). Default 5 minutes.
   */
  cacheTtl?: CacheTtl;
}

/** The lifetime of a cached prompt prefix. */
export type CacheTtl = '5m' | '1h';

/**
 * Why the model stopped: it finished (`end_turn`), it wants its tool calls answered (`tool_calls`), its
 * answer was cut (`max_tokens`, `context_window`), it refused (`refusal`), or something else (`other`).
 */
export type LlmStopReason = 'end_turn' | 'tool_calls' | 'max_tokens' | 'context_window' | 'refusal' | 'other';

export interface LlmResponse {
  /** The model's answer: text, tool calls and thinking, in its order. */
  content: (LlmText | LlmToolCall | LlmThinking)[];
  stopReason: LlmStopReason | null;
  usage: TokenUsage;
  model: string;
  /** The provider's id of the request (for support; never a secret). */
  requestId?: string;
  durationMs: number;
}

/** The brain's only way to reach a model (swappable for a scripted fake in tests and benchmarks). */
export interface LlmClient {
  create(req: LlmRequest): Promise<LlmResponse>;
}

/** The tool calls of an answer, in order. */
export function toolCalls(content: readonly LlmPart[]): LlmToolCall[] {
  return content.filter((b): b is LlmToolCall => b.type === 'tool_call');
}
