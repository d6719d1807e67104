import type { TokenUsage } from '../core/llm-usage';

/** USD per million tokens (PLATFORMS.md C9). Unknown models are priced as the most expensive known one. */
interface Price {
  input: number;
  output: number;
  cacheWrite5m: number;
  cacheRead: number;
}

const PRICES: Record<string, Price> = {
  'claude-opus-5-5': { input: 4, output: 20, cacheWrite5m: 5, cacheRead: 0.2 },
  'claude-sonnet-5-5': { input: 2, output: 10, cacheWrite5m: 2.5, cacheRead: 0.1 },
  'claude-haiku-5-5': { input: 0.1, output: 0.5, cacheWrite5m: 0.125, cacheRead: 0.01 },
  'claude-fable-5-1': { input: 10, output: 50, cacheWrite5m: 12.5, cacheRead: 0.25 },
  'claude-opus-5': { input: 5, output: 25, cacheWrite5m: 6.25, cacheRead: 0.5 },
  'claude-opus-4-5': { input: 5, output: 25, cacheWrite5m: 6.25, cacheRead: 0.5 },
  'claude-haiku-4-5': { input: 1, output: 5, cacheWrite5m: 1.25, cacheRead: 0.1 },
};
const FALLBACK: Price = PRICES['claude-fable-5-1']!;

export function costUsd(model: string, u: TokenUsage): number {
  const p = PRICES[model] ?? FALLBACK;
  const usd =
    (u.inputTokens * p.input +
      u.outputTokens * p.output +
      u.cacheWriteTokens * p.cacheWrite5m +
      u.cacheReadTokens * p.cacheRead) /
    1_000_000;
  return Math.round(usd * 1_000_000) / 1_000_000;
}
