import type { SqlParams } from '../db/sql';

/** Per-sender limits (issue 8); 0 turns a limit off. */
export interface SenderBudgetLimits {
  turnsPerMinute: number;
  turnsPerDay: number;
  /** LLM cost of one sender's turns today (organisation time zone), in USD. */
  dailyCostUsd: number;
}

/** Which limit a turn is over. */
export type SenderLimit = 'minute' | 'day' | 'cost';

export type BudgetVerdict =
  | { ok: true }
  /** `notify`: the first refusal in this window gets the polite reply; later ones are recorded silently. */
  | { ok: false; limit: SenderLimit; reasonCode: SenderBudgetCode; notify: boolean };

export type SenderBudgetCode = 'BUDGET_SENDER_MINUTE' | 'BUDGET_SENDER_DAY' | 'BUDGET_SENDER_COST';

const CODES: Record<SenderLimit, SenderBudgetCode> = {
  minute: 'BUDGET_SENDER_MINUTE',
  day: 'BUDGET_SENDER_DAY',
  cost: 'BUDGET_SENDER_COST',
};

export interface UsageRow {
  minute_turns: number;
  day_turns: number;
  day_cost: number;
  minute_refusals: number;
  day_refusals: number;
}

/**
 * One sender's use so far, from the turn records (one indexed query): turns in the last minute and today in
 * the organisation's time zone (refused turns not counted, so waiting is enough), today's LLM cost, and
 * refusals already sent. Windows use the database clock, which also stamps the records. Placeholders come
 * from `p`, so the query can be one column of a composed statement (the turn's first statement).
 */
function usageQuery(p: SqlParams, platform: string, accountId: string, timezone: string): string {
  const [pl, acc, tz] = [p.add(platform), p.add(accountId), p.add(timezone)];
  return `WITH w AS (
    SELECT now() - interval '1 minute' AS minute,
           date_trunc('day', now() AT TIME ZONE ${tz}::text) AT TIME ZONE ${tz}::text AS day)
  SELECT
    count(*) FILTER (WHERE t."createdAt" >= w.minute AND NOT t.refused)::int AS minute_turns,
    count(*) FILTER (WHERE t."createdAt" >= w.day AND NOT t.refused)::int AS day_turns,
    coalesce(sum(t."costUsd") FILTER (WHERE t."createdAt" >= w.day), 0)::float8 AS day_cost,
    count(*) FILTER (WHERE t."createdAt" >= w.minute AND t.code = 'BUDGET_SENDER_MINUTE')::int AS minute_refusals,
    count(*) FILTER (WHERE t."createdAt" >= w.day AND t.code IN ('BUDGET_SENDER_DAY', 'BUDGET_SENDER_COST'))::int
      AS day_refusals
  FROM w LEFT JOIN LATERAL (
    SELECT "createdAt", "reasonCode" AS code, "costUsd", "reasonCode" LIKE 'BUDGET_SENDER_%' AS refused
    FROM turn_records
    WHERE platform = ${pl}::text AND "accountId" = ${acc}::text AND kind = 'user_request'
      AND "createdAt" >= least(w.minute, w.day)
  ) t ON true
  GROUP BY w.minute, w.day`;
}

/**
 * Budgets per sender (issue 8): a limit of turns per minute and per day, and of LLM cost per day, for
 * each platform account — so one sender (a stranger in a DM, a runaway script) cannot spend the
 * organisation's whole daily budget. Read with the turn's first statement and checked before anything else;
 * over a limit the turn gets a polite persona reply (once per window) and no LLM call.
 */
export class SenderBudget {
  constructor(private readonly o: { limits: SenderBudgetLimits; timezone: string }) {}

  /** True when at least one limit is on. */
  get enabled(): boolean {
    const l = this.o.limits;
    return l.turnsPerMinute > 0 || l.turnsPerDay > 0 || l.dailyCostUsd > 0;
  }

  /**
   * A column for a composed statement: the sender's use as one JSON value (null when no limit is on), for
   * {@link verdict}. The turn's first statement reads it with the sender, so the check costs no round trip.
   */
  usageColumn(p: SqlParams, sender: { platform: string; senderAccountId: string }): string {
    if (!this.enabled) return 'NULL::json';
    const usage = usageQuery(p, sender.platform, sender.senderAccountId, this.o.timezone);
    return `(SELECT row_to_json(u) FROM (${usage}) u)`;
  }

  /** Whether a turn may go ahead, given the sender's use ({@link usageColumn}; null when no limit is on). */
  verdict(u: UsageRow | null): BudgetVerdict {
    if (!this.enabled || !u) return { ok: true };
    const { turnsPerMinute, turnsPerDay, dailyCostUsd } = this.o.limits;
    const over = (limit: SenderLimit, refusals: number): BudgetVerdict => ({
      ok: false,
      limit,
      reasonCode: CODES[limit],
      notify: refusals === 0,
    });
    if (turnsPerDay > 0 && u.day_turns >= turnsPerDay) return over('day', u.day_refusals);
    if (dailyCostUsd > 0 && u.day_cost >= dailyCostUsd) return over('cost', u.day_refusals);
    if (turnsPerMinute > 0 && u.minute_turns >= turnsPerMinute) return over('minute', u.minute_refusals);
    return { ok: true };
  }
}
