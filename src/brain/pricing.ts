import type { TokenUsage } from '../core/llm-usage';

/** USD per million tokens (PLATFORMS.md C9). Unknown models are priced as the most expensive known one. */
export interface Price {
  input: number;
  output: number;
  /** A prefix written to the cache that lives 5 minutes after its last use (1.25× input). */
  cacheWrite5m: number;
  /** A prefix written to the cache that lives an hour after its last use (2× input). */
  cacheWrite1h: number;
  cacheRead: number;
}

const PRICES: Record<string, Price> = {
  'claude-opus-5-5': { input: 4, output: 20, cacheWrite5m: 5, cacheWrite1h: 8, cacheRead: 0.2 },
  'claude-sonnet-5-5': { input: 2, output: 10, cacheWrite5m: 2.5, cacheWrite1h: 4, cacheRead: 0.1 },
  // Prompts of up to 100K tokens (Hisho's are far below); above, the whole request is billed at 5×.
  'claude-haiku-5-5': { input: 0.1, output: 0.5, cacheWrite5m: 0.125, cacheWrite1h: 0.2, cacheRead: 0.01 },
  'claude-fable-5-1': { input: 10, output: 50, cacheWrite5m: 12.5, cacheWrite1h: 20, cacheRead: 0.25 },
  'claude-opus-5': { input: 5, output: 25, cacheWrite5m: 6.25, cacheWrite1h: 10, cacheRead: 0.5 },
  'claude-opus-4-5': { input: 5, output: 25, cacheWrite5m: 6.25, cacheWrite1h: 10, cacheRead: 0.5 },
  'claude-haiku-4-5': { input: 1, output: 5, cacheWrite5m: 1.25, cacheWrite1h: 2, cacheRead: 0.1 },
};
const FALLBACK: Price = PRICES['claude-fable-5-1']!;

/** A model's prices (an unknown model: the most expensive known one, so no cost is under-counted). */
export function priceOf(model: string): Price {
  return PRICES[model] ?? FALLBACK;
}

export function costUsd(model: string, u: TokenUsage): number {
  const p = priceOf(model);
  const hour = Math.min(u.cacheWrite1hTokens ?? 0, u.cacheWriteTokens);
  const usd =
    (u.inputTokens * p.input +
      u.outputTokens * p.output +
      (u.cacheWriteTokens - hour) * p.cacheWrite5m +
      hour * p.cacheWrite1h +
      u.cacheReadTokens * p.cacheRead) /
    1_000_000;
  return Math.round(usd * 1_000_000) / 1_000_000;
}
