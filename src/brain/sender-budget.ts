import type { Sql } from '../db/sql';

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

interface UsageRow {
  minute_turns: number;
  day_turns: number;
  day_cost: number;
  minute_refusals: number;
  day_refusals: number;
}

/**
 * One sender's use so far, from the turn records (one indexed statement): turns in the last minute and
 * today in the organisation's time zone (refused turns not counted, so waiting is enough), today's LLM
 * cost, and refusals already sent. Windows use the database clock, which also stamps the records.
 */
const USAGE_SQL = `WITH w AS (
    SELECT now() - interval '1 minute' AS minute, date_trunc('day', now() AT TIME ZONE $3) AT TIME ZONE $3 AS day)
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
    WHERE platform = $1 AND "accountId" = $2 AND kind = 'user_request' AND "createdAt" >= least(w.minute, w.day)
  ) t ON true
  GROUP BY w.minute, w.day`;

/**
 * Budgets per sender (issue 8): a limit of turns per minute and per day, and of LLM cost per day, for
 * each platform account — so one sender (a stranger in a DM, a runaway script) cannot spend the
 * organisation's whole daily budget. Checked before anything else in a turn; over a limit the turn gets
 * a polite persona reply (once per window) and no LLM call.
 */
export class SenderBudget {
  constructor(private readonly o: { sql: Sql; limits: SenderBudgetLimits; timezone: string }) {}

  /** True when at least one limit is on. */
  get enabled(): boolean {
    const l = this.o.limits;
    return l.turnsPerMinute > 0 || l.turnsPerDay > 0 || l.dailyCostUsd > 0;
  }

  async check(sender: { platform: string; senderAccountId: string }): Promise<BudgetVerdict> {
    if (!this.enabled) return { ok: true };
    const rows = await this.o.sql<UsageRow>(USAGE_SQL, [sender.platform, sender.senderAccountId, this.o.timezone]);
    const u = rows[0]!;
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
