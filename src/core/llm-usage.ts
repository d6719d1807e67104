/** What one LLM call cost (shared by brain/, which makes the calls, and observability/, which records them). */

/** Tokens of one call, by kind (PLATFORMS.md C9). */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** Prompt tokens written to the cache (both lifetimes). */
  cacheWriteTokens: number;
  cacheReadTokens: number;
  /** Of `cacheWriteTokens`, those written to live an hour (priced 2× input instead of 1.25×). */
  cacheWrite1hTokens?: number;
}

/** One LLM call, for usage and cost records (R-B4). */
export interface LlmCallRecord {
  model: string;
  purpose: string;
  usage: TokenUsage;
  costUsd: number;
  durationMs: number;
  requestId?: string;
}
