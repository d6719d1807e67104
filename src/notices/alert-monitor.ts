import type { Sql } from '../db/sql';
import { startOfDay } from '../brain/cost-guard';
import type { AdminAlerts, AlertInput } from './admin-alerts';
import type { Logger } from '../observability/logger';

/** The monitoring thresholds of seed 003 §15.1 (the same numbers ship in ops/prometheus/hisho-alerts.yml). */
export interface AlertThresholds {
  /** LLM response time p95, seconds (> 10 s: warn). */
  llmP95Seconds: number;
  /** Share of tool executions that failed inside the handler (> 5 %: warn). */
  toolErrorRate: number;
  /** Share of user turns that asked for confirmation (> 30 %: info). */
  confirmationRate: number;
  /** Share of user turns that were blocked (> 10 %: warn). */
  blockRate: number;
  /** LLM cost today in USD (organisation day); 0 = no budget alert. */
  dailyCostUsd: number;
  /** The trailing window the rates are computed over, minutes. */
  evalMinutes: number;
  /** Fewer samples than this in the window: no rate alert (noise). */
  minSamples: number;
}

export const DEFAULT_THRESHOLDS: AlertThresholds = {
  llmP95Seconds: 10,
  toolErrorRate: 0.05,
  confirmationRate: 0.3,
  blockRate: 0.1,
  dailyCostUsd: 35,
  evalMinutes: 60,
  minSamples: 20,
};

/** Window figures read in one statement. */
export interface MonitorFigures {
  p95Ms: number | null;
  llmCalls: number;
  turns: number;
  confirms: number;
  blocks: number;
  executions: number;
  executionErrors: number;
  costTodayUsd: number;
  violations: number;
  violationCodes: string | null;
  violationTurns: string | null;
}

/** Pure: which alerts the figures call for. */
export function alertsFor(f: MonitorFigures, t: AlertThresholds): AlertInput[] {
  const out: AlertInput[] = [];
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const windowMinutes = t.evalMinutes;
  if (f.llmCalls >= t.minSamples && f.p95Ms !== null && f.p95Ms > t.llmP95Seconds * 1000) {
    out.push({
      kind: 'llm_latency_p95',
      severity: 'warn',
      facts: {
        value: `${(f.p95Ms / 1000).toFixed(1)}s`,
        threshold: `${t.llmP95Seconds}s`,
        windowMinutes,
        samples: f.llmCalls,
      },
    });
  }
  // Rates: [kind, severity, count, samples, threshold].
  const rates: [AlertInput['kind'], AlertInput['severity'], number, number, number][] = [
    ['tool_error_rate', 'warn', f.executionErrors, f.executions, t.toolErrorRate],
    ['confirmation_rate', 'info', f.confirms, f.turns, t.confirmationRate],
    ['block_rate', 'warn', f.blocks, f.turns, t.blockRate],
  ];
  for (const [kind, severity, count, samples, threshold] of rates) {
    if (samples < t.minSamples || count / samples <= threshold) continue;
    const facts = { value: pct(count / samples), threshold: pct(threshold), windowMinutes, samples, count };
    out.push({ kind, severity, facts });
  }
  if (t.dailyCostUsd > 0 && f.costTodayUsd > t.dailyCostUsd) {
    out.push({
      kind: 'daily_cost_budget',
      severity: 'warn',
      facts: { spentUsd: f.costTodayUsd.toFixed(2), threshold: `${t.dailyCostUsd} USD` },
    });
  }
  if (f.violations > 0) {
    out.push({
      kind: 'constitution_violation',
      severity: 'critical',
      facts: { count: f.violations, reasonCodes: f.violationCodes ?? '', turnIds: f.violationTurns ?? '' },
    });
  }
  return out;
}

/**
 * Checks the §15.1 thresholds and constitution violations (seed 003 §4.7.3) every `intervalMs` from the
 * turn records and LLM usage rows, and raises admin alerts. Every instance may check: an alert is sent
 * once per window whichever instance raises it.
 */
export class AlertMonitor {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly o: {
      sql: Sql;
      alerts: AdminAlerts;
      logger: Logger;
      thresholds: AlertThresholds;
      timezone: string;
      windowMs: number;
      intervalMs: number;
      now?: () => Date;
    },
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      void this.check().catch((err: Error) => this.o.logger.warn({ err: err.name }, 'alert check failed'));
    }, this.o.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One check: reads the figures, raises what they call for; returns what was raised. */
  async check(): Promise<AlertInput[]> {
    // Admin rooms may change with a directory import; the outage path needs them without the database.
    await this.o.alerts.refreshRooms().catch(() => undefined);
    const figures = await this.figures();
    const due = alertsFor(figures, this.o.thresholds);
    for (const a of due) await this.o.alerts.raise(a);
    return due;
  }

  async figures(): Promise<MonitorFigures> {
    const now = this.o.now?.() ?? new Date();
    const since = new Date(now.getTime() - this.o.thresholds.evalMinutes * 60_000).toISOString();
    const today = startOfDay(now, this.o.timezone).toISOString();
    const windowStart = new Date(Math.floor(now.getTime() / this.o.windowMs) * this.o.windowMs).toISOString();
    const [r] = await this.o.sql<Record<string, string | number | null>>(
      `WITH w AS (SELECT $1::timestamptz AT TIME ZONE 'UTC' AS since, $2::timestamptz AT TIME ZONE 'UTC' AS today,
        $3::timestamptz AT TIME ZONE 'UTC' AS win),
       turns AS (SELECT decision, proposals FROM turn_records, w WHERE "createdAt" >= w.since
         AND kind = 'user_request'),
       execs AS (SELECT p->'execution'->>'status' AS status FROM turns, jsonb_array_elements(turns.proposals) p
         WHERE p ? 'execution'),
       bad AS (SELECT t.id, t."createdAt", concat_ws(' ', t."reasonCode", t."guardianReason", t.proposals::text) AS text
               FROM turn_records t, w WHERE t."createdAt" >= w.win
                 AND (t."reasonCode" LIKE 'G_CONSTITUTION%' OR coalesce(t."guardianReason",
                   '') LIKE 'G_CONSTITUTION%' OR t.proposals::text LIKE '%G_CONSTITUTION%'))
       SELECT (SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY "durationMs") FROM llm_usage, w
         WHERE "createdAt" >= w.since) AS p95,
              (SELECT count(*) FROM llm_usage, w WHERE "createdAt" >= w.since)::int AS llm,
              (SELECT count(*) FROM turns)::int AS turns,
              (SELECT count(*) FROM turns WHERE decision IN ('CONFIRM', 'SHADOW_CONFIRM'))::int AS confirms,
              (SELECT count(*) FROM turns WHERE decision IN ('BLOCK', 'SHADOW_BLOCK'))::int AS blocks,
              (SELECT count(*) FROM execs WHERE status IN ('ok', 'error', 'internal_error'))::int AS execs,
              (SELECT count(*) FROM execs WHERE status = 'internal_error')::int AS exec_errors,
              (SELECT coalesce(sum("costUsd"), 0)::text FROM llm_usage, w WHERE "createdAt" >= w.today) AS cost,
              (SELECT count(*) FROM bad)::int AS violations,
              (SELECT string_agg(DISTINCT m[1], ', ') FROM bad,
                 regexp_matches(bad.text, '(G_CONSTITUTION_[A-Z_]+)', 'g') AS m) AS codes,
              (SELECT string_agg(id, ', ') FROM (SELECT id FROM bad ORDER BY "createdAt" DESC LIMIT 5) l) AS turn_ids`,
      [since, today, windowStart],
    );
    const n = (k: string) => Number(r?.[k] ?? 0);
    return {
      p95Ms: r?.p95 === null || r?.p95 === undefined ? null : Number(r.p95),
      llmCalls: n('llm'),
      turns: n('turns'),
      confirms: n('confirms'),
      blocks: n('blocks'),
      executions: n('execs'),
      executionErrors: n('exec_errors'),
      costTodayUsd: n('cost'),
      violations: n('violations'),
      violationCodes: (r?.codes as string | null) ?? null,
      violationTurns: (r?.turn_ids as string | null) ?? null,
    };
  }
}
