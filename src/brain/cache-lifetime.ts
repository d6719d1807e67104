import type { Db } from '../db/prisma';
import type { CacheTtl } from './llm-client';
import { priceOf, type Price } from './pricing';

/** Minutes a cached prefix lives after its last use, by lifetime. */
const LIFETIME_MINUTES: Record<CacheTtl, number> = { '5m': 5, '1h': 60 };

/** Fewer measured gaps than this and the 5-minute default stays (a new organisation, a quiet week). */
export const MIN_GAPS = 20;

/** What each lifetime would have cost over the measured gaps (USD per million prefix tokens), and the choice. */
export interface TtlChoice {
  ttl: CacheTtl;
  gaps: number;
  cost5m: number;
  cost1h: number;
}

/**
 * The cheaper cache lifetime for the prefix of an organisation whose turns arrived with these gaps (minutes between
 * one turn and the next). A turn after a gap longer than the lifetime writes the prefix again (5 min: 1.25× input,
 * 1 h: 2×); any other turn reads it (0.05–0.1× input; reads refresh the lifetime). So the hour wins when the gaps of
 * 5–60 minutes, where only it still holds the prefix, outweigh the gaps over an hour, where both write and it pays
 * more: n(5–60 min) × (write 5m − read) > n(> 60 min) × (write 1h − write 5m), for Opus 5.5 n(5–60) > 0.625 ×
 * n(> 60). docs/decisions/0011-cache-lifetime-by-traffic.md.
 */
export function chooseCacheTtl(gapsMinutes: readonly number[], price: Price): TtlChoice {
  const cost = (ttl: CacheTtl, write: number) =>
    gapsMinutes.reduce((sum, g) => sum + (g > LIFETIME_MINUTES[ttl] ? write : price.cacheRead), 0);
  const cost5m = cost('5m', price.cacheWrite5m);
  const cost1h = cost('1h', price.cacheWrite1h);
  const ttl = gapsMinutes.length >= MIN_GAPS && cost1h < cost5m ? '1h' : '5m';
  return { ttl, gaps: gapsMinutes.length, cost5m, cost1h };
}

/** Minutes between consecutive instants (sorted first). */
export function gapsOf(times: readonly Date[]): number[] {
  const t = times.map((d) => d.getTime()).sort((a, b) => a - b);
  return t.slice(1).map((x, i) => (x - t[i]!) / 60_000);
}

export interface CacheLifetimeOptions {
  db: Db;
  /** LLM_CACHE_TTL: `auto` decides per organisation from its traffic; `5m` or `1h` fixes it. */
  mode: CacheTtl | 'auto';
  /** The main model (its prices weigh the two lifetimes). */
  model: string;
  /** How long an organisation's decision is reused (one query per organisation per window). */
  refreshMs?: number;
  now?: () => Date;
}

/** Turns looked at: those of the last week, at most this many. */
const WINDOW_DAYS = 7;
const WINDOW_TURNS = 1000;

/**
 * The cache lifetime of an organisation's prefix, from the arrival times of its recent turns (their first model
 * call, recorded in llm_usage): re-read every `refreshMs` (10 minutes), 5 minutes when unknown or unreadable.
 */
export class CacheLifetime {
  private readonly decided = new Map<string, { at: number; ttl: CacheTtl }>();

  constructor(private readonly o: CacheLifetimeOptions) {}

  async ttlFor(orgId: string | null | undefined): Promise<CacheTtl> {
    if (this.o.mode !== 'auto') return this.o.mode;
    if (!orgId) return '5m';
    const now = (this.o.now?.() ?? new Date()).getTime();
    const hit = this.decided.get(orgId);
    if (hit && now - hit.at < (this.o.refreshMs ?? 600_000)) return hit.ttl;
    let ttl: CacheTtl = '5m';
    try {
      ttl = chooseCacheTtl(gapsOf(await this.arrivals(orgId, new Date(now))), priceOf(this.o.model)).ttl;
    } catch {
      // Unreadable traffic: the default lifetime (a cost question, never a reason to fail a turn).
    }
    this.decided.set(orgId, { at: now, ttl });
    return ttl;
  }

  private async arrivals(orgId: string, now: Date): Promise<Date[]> {
    const since = new Date(now.getTime() - WINDOW_DAYS * 86_400_000);
    const rows = await this.o.db.$queryRaw<{ at: Date }[]>`
      SELECT "createdAt" AS at FROM llm_usage
      WHERE "orgId" = ${orgId} AND purpose = 'turn' AND "createdAt" >= ${since}
      ORDER BY "createdAt" DESC LIMIT ${WINDOW_TURNS}`;
    return rows.map((r) => r.at);
  }
}
