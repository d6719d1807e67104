/** What one LLM call cost (shared by brain/, which makes the calls, and observability/, which records them). */

/** Tokens of one call, by kind (PLATFORMS.md C9). */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheWriteTokens: number;
  cacheReadTokens: number;
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
