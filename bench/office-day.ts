/**
 * The office day of `npm run bench`'s cost figures (bench/cost.ts): when the conversations arrive, and what the
 * prompt cache makes of their requests. Pure: the requests and their token counts come from the caller.
 */
import type { CacheTtl } from '../src/brain/llm-client';
import { costUsd } from '../src/brain/pricing';
import type { TokenUsage } from '../src/core/llm-usage';

/**
 * How an office's messages spread over its day (Asia/Tokyo, hour → relative rate): from 9:00 to 18:00, busiest in
 * the late morning and mid-afternoon, quiet over lunch; nothing at night (the first request of a day always writes).
 */
export const OFFICE_HOURS: Readonly<Record<number, number>> = {
  9: 0.8,
  10: 1.2,
  11: 1.1,
  12: 0.4,
  13: 0.9,
  14: 1.1,
  15: 1.1,
  16: 1.0,
  17: 0.8,
};

/** A small seeded generator (mulberry32): the same seed, the same day. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `n` arrival times (seconds after midnight, sorted) of a day whose messages come independently at the rates of
 * {@link OFFICE_HOURS}: a Poisson process of that shape, given that it brought `n` messages.
 */
export function officeArrivals(n: number, random: () => number): number[] {
  const hours = Object.entries(OFFICE_HOURS).map(([h, w]) => ({ h: Number(h), w }));
  const total = hours.reduce((a, x) => a + x.w, 0);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    let pick = random() * total;
    const hour = hours.find((x) => (pick -= x.w) < 0) ?? hours.at(-1)!;
    out.push(hour.h * 3600 + random() * 3600);
  }
  return out.sort((a, b) => a - b);
}

/** A cache breakpoint of a request: the prefix up to it (its identity and length in tokens) and its lifetime. */
export interface Breakpoint {
  key: string;
  tokens: number;
  ttl: CacheTtl;
}

/** One model request as the cache sees it. */
export interface SimRequest {
  model: string;
  /** Breakpoints in request order (tools, then system). */
  breakpoints: readonly Breakpoint[];
  /** Prompt tokens of the whole request. */
  promptTokens: number;
  outputTokens: number;
}

const SECONDS: Record<CacheTtl, number> = { '5m': 300, '1h': 3600 };

/**
 * The prompt cache as PLATFORMS.md C5 describes it: a request reads the longest prefix, up to one of its
 * breakpoints, that an earlier request of the same model wrote and that has not expired; it writes the rest up to
 * its last breakpoint (each part at its breakpoint's lifetime); a read or a write keeps the entry for its lifetime
 * from the request's start. Caches are per model (the key includes it).
 */
export class CacheSim {
  private readonly expires = new Map<string, number>();

  request(r: SimRequest, at: number): TokenUsage {
    const live = (b: Breakpoint) => (this.expires.get(`${r.model}\u0000${b.key}`) ?? -Infinity) > at;
    let hit = -1;
    r.breakpoints.forEach((b, i) => {
      if (live(b)) hit = i;
    });
    const read = hit >= 0 ? r.breakpoints[hit]!.tokens : 0;
    let write = 0;
    let write1h = 0;
    let before = read;
    for (const b of r.breakpoints.slice(hit + 1)) {
      const part = Math.max(0, b.tokens - before);
      write += part;
      if (b.ttl === '1h') write1h += part;
      before = Math.max(before, b.tokens);
    }
    for (const b of r.breakpoints) {
      const key = `${r.model}\u0000${b.key}`;
      this.expires.set(key, Math.max(this.expires.get(key) ?? 0, at + SECONDS[b.ttl]));
    }
    const last = r.breakpoints.at(-1)?.tokens ?? 0;
    return {
      inputTokens: r.promptTokens - Math.max(last, read),
      outputTokens: r.outputTokens,
      cacheWriteTokens: write,
      cacheReadTokens: read,
      ...(write1h > 0 ? { cacheWrite1hTokens: write1h } : {}),
    };
  }
}

/**
 * The requests that answer one message, each a number of seconds after it; `messages`: 2 when the person's
 * answer to a question (「はい」) is among them — each message is a conversation.
 */
export interface Conversation {
  requests: { afterSeconds: number; request: SimRequest }[];
  messages: number;
}

/** What a day cost, in USD, by where the money went. */
export interface DayCost {
  conversations: number;
  requests: number;
  usd: { prefixWrite: number; prefixRead: number; input: number; output: number };
  tokens: TokenUsage & { cacheWrite1hTokens: number };
}

/** Runs one day: the conversations at their arrival times (seconds after midnight) through a cold cache. */
export function simulateDay(conversations: readonly Conversation[], arrivals: readonly number[]): DayCost {
  const cache = new CacheSim();
  const events = conversations
    .flatMap((c, i) => c.requests.map((r) => ({ at: arrivals[i]! + r.afterSeconds, request: r.request })))
    .sort((a, b) => a.at - b.at);
  const day: DayCost = {
    conversations: conversations.reduce((n, c) => n + c.messages, 0),
    requests: events.length,
    usd: { prefixWrite: 0, prefixRead: 0, input: 0, output: 0 },
    tokens: { inputTokens: 0, outputTokens: 0, cacheWriteTokens: 0, cacheReadTokens: 0, cacheWrite1hTokens: 0 },
  };
  for (const e of events) {
    const u = cache.request(e.request, e.at);
    const zero = { inputTokens: 0, outputTokens: 0, cacheWriteTokens: 0, cacheReadTokens: 0 };
    const part = (x: Partial<TokenUsage>) => costUsd(e.request.model, { ...zero, ...x });
    day.usd.prefixWrite += part({ cacheWriteTokens: u.cacheWriteTokens, cacheWrite1hTokens: u.cacheWrite1hTokens });
    day.usd.prefixRead += part({ cacheReadTokens: u.cacheReadTokens });
    day.usd.input += part({ inputTokens: u.inputTokens });
    day.usd.output += part({ outputTokens: u.outputTokens });
    day.tokens.inputTokens += u.inputTokens;
    day.tokens.outputTokens += u.outputTokens;
    day.tokens.cacheWriteTokens += u.cacheWriteTokens;
    day.tokens.cacheReadTokens += u.cacheReadTokens;
    day.tokens.cacheWrite1hTokens += u.cacheWrite1hTokens ?? 0;
  }
  return day;
}
