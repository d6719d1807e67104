import type { Db } from '../db/prisma';
import { localDate } from '../core/zoned-time';
import type { Logger } from '../observability/logger';
import type { ModelSelector } from './brain';
import type { CacheTtl } from './llm-client';
import { routeModel, type LlmJob, type ModelRoute } from './routing';

export interface CostGuardOptions {
  db: Db;
  logger: Logger;
  /** The main model (ANTHROPIC_MODEL). */
  model: string;
  /** The small model of the routing rule (LLM_SMALL_MODEL). */
  smallModel?: string;
  /** LLM_ROUTING: calls that cannot act go to the small model (routing.ts). */
  routing?: boolean;
  /** The lifetime of an organisation's cached prefix (5 minutes without). */
  cacheLifetime?: { ttlFor(orgId: string | null | undefined): Promise<CacheTtl> };
  fallbackModel: string;
  dailyLimitUsd: number;
  action: 'fallback_model' | 'refuse';
  timezone: string;
  now?: () => Date;
  /** How long a spend figure is reused (one query per window, not per turn). */
  cacheMs?: number;
  /** Called once a day (per instance) when the limit is crossed: the admin alert (R-O5). */
  onLimitReached?: (spentUsd: number, limitUsd: number, action: string) => void;
}

/**
 * Picks the model of a call: the routing rule's (routing.ts), then the daily LLM cost limit (R-O5): below the
 * limit, that model; above it, an alert (once a day) and either the cheaper fallback model (for calls of the
 * main model) or a polite refusal. The cached prefix's lifetime comes with it (cache-lifetime.ts).
 */
export class CostGuard implements ModelSelector {
  private cached: { at: number; usd: number } | null = null;
  private alertedDay: string | null = null;

  constructor(private readonly o: CostGuardOptions) {}

  async select(job: LlmJob = { purpose: 'turn', mayAct: true }): Promise<ModelRoute | { refuse: true }> {
    const routed = routeModel(job, {
      mainModel: this.o.model,
      smallModel: this.o.smallModel ?? this.o.model,
      routing: this.o.routing ?? false,
    });
    const model = await this.withinLimit(routed);
    if (model === null) return { refuse: true };
    return { model, cacheTtl: (await this.o.cacheLifetime?.ttlFor(job.orgId)) ?? '5m' };
  }

  /** The model to use under the daily limit, or null to refuse. */
  private async withinLimit(model: string): Promise<string | null> {
    if (this.o.dailyLimitUsd <= 0) return model;
    const spent = await this.spentToday();
    if (spent < this.o.dailyLimitUsd) return model;
    const day = this.dayKey();
    if (this.alertedDay !== day) {
      this.alertedDay = day;
      this.o.logger.error(
        { alert: 'llm_cost_limit', spentUsd: spent, limitUsd: this.o.dailyLimitUsd, action: this.o.action },
        'ADMIN ALERT: daily LLM cost limit reached',
      );
      this.o.onLimitReached?.(spent, this.o.dailyLimitUsd, this.o.action);
    }
    if (this.o.action === 'refuse') return null;
    return model === this.o.model ? this.o.fallbackModel : model;
  }

  private dayKey(): string {
    return localDate(this.now(), this.o.timezone);
  }

  private now(): Date {
    return this.o.now?.() ?? new Date();
  }

  private async spentToday(): Promise<number> {
    const t = Date.now();
    if (this.cached && t - this.cached.at < (this.o.cacheMs ?? 15000)) return this.cached.usd;
    const since = startOfDay(this.now(), this.o.timezone);
    const rows = await this.o.db.$queryRaw<
      { usd: string | null }[]
    >`SELECT sum("costUsd")::text AS usd FROM llm_usage WHERE "createdAt" >= ${since}`;
    const usd = Number(rows[0]?.usd ?? 0);
    this.cached = { at: t, usd };
    return usd;
  }
}

/** One formatter per time zone, built once (not per turn). */
const dayFormatters = new Map<string, Intl.DateTimeFormat>();

/** Midnight of `now`'s day in `timezone`, as an instant. */
export function startOfDay(now: Date, timezone: string): Date {
  let f = dayFormatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hour12: false,
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    dayFormatters.set(timezone, f);
  }
  const parts = f.formatToParts(now);
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
  const secondsIntoDay = (get('hour') % 24) * 3600 + get('minute') * 60 + get('second');
  return new Date(Math.floor(now.getTime() / 1000) * 1000 - secondsIntoDay * 1000);
}
