import { startOfDay } from '../../brain/cost-guard';
import type { Sql } from '../../db/sql';
import { KIND_LABELS, PURPOSE_LABELS } from './labels';

const DAY = 86_400_000;

/** One row of the cost panel: a kind of call on one model, over the period. */
export interface CostRow {
  /** What the calls were for, in words (会話, 通知, 会話の要約 …). */
  kind: string;
  model: string;
  calls: number;
  usd: number;
  yen: number;
  /** This row's share of the cost per conversation (null for calls no conversation causes: notices, work). */
  perConversation: { usd: number; yen: number } | null;
}

/** The /admin cost panel (issue 39): what a conversation costs, and where the month is heading, in dollars and yen. */
export interface CostPanel {
  days: number;
  jpyPerUsd: number;
  /** Messages people sent Hisho in the period (every user turn, a 「はい」 to a question included). */
  conversations: number;
  /** Per conversation: its own calls and its share of the summaries and self-critiques it caused. */
  perConversation: { usd: number; yen: number } | null;
  monthToDate: { usd: number; yen: number };
  /** This month so far plus the last 7 days' daily average for the days left. */
  forecast: { usd: number; yen: number };
  rows: CostRow[];
}

/** Calls made for conversations: the turns' own and the background calls they cause. */
const CONVERSATION_PURPOSES = ['conversation_summary', 'self_critique'];

/** The kind of a call as the panel names it: the turn's kind, or the background purpose. */
function kindOf(purpose: string, turnKind: string | null): string {
  if (CONVERSATION_PURPOSES.includes(purpose)) return PURPOSE_LABELS[purpose]!;
  return KIND_LABELS[turnKind ?? ''] ?? 'その他';
}

/** A model id as people write it: claude-opus-5-5 → Claude Opus 5.5. */
export function modelName(id: string): string {
  const m = /^claude-([a-z]+)-(\d+)(?:-(\d+))?$/.exec(id);
  if (!m) return id;
  return `Claude ${m[1]![0]!.toUpperCase()}${m[1]!.slice(1)} ${m[2]}${m[3] ? `.${m[3]}` : ''}`;
}

function monthStartOf(now: Date, timezone: string): Date {
  const day = Number(new Intl.DateTimeFormat('en-US', { timeZone: timezone, day: 'numeric' }).format(now));
  return startOfDay(new Date(startOfDay(now, timezone).getTime() - (day - 1) * DAY + 3_600_000), timezone);
}

function daysInMonth(now: Date, timezone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: timezone, year: 'numeric', month: 'numeric' })
    .formatToParts(now)
    .reduce<Record<string, number>>((a, p) => ({ ...a, [p.type]: Number(p.value) }), {});
  return new Date(Date.UTC(parts.year!, parts.month!, 0)).getUTCDate();
}

/**
 * The cost panel over today (`24h`) or the last 30 days (`30d`): cost per conversation, by kind of call and model,
 * and the month's forecast. One query over llm_usage (with the kind of the turn each call belongs to).
 */
export async function costPanel(
  sql: Sql,
  range: '24h' | '30d',
  now: Date,
  timezone: string,
  jpyPerUsd: number,
): Promise<CostPanel> {
  const from = range === '24h' ? startOfDay(now, timezone) : new Date(startOfDay(now, timezone).getTime() - 29 * DAY);
  const month = monthStartOf(now, timezone);
  const week = new Date(now.getTime() - 7 * DAY);
  const ts = (d: Date) => d.toISOString();
  const [calls, turns] = await Promise.all([
    sql<{
      model: string;
      purpose: string;
      kind: string | null;
      usd: number;
      calls: number;
      month: number;
      week: number;
    }>(
      `WITH w AS (SELECT $1::timestamptz AT TIME ZONE 'UTC' AS p, $2::timestamptz AT TIME ZONE 'UTC' AS m,
                         $3::timestamptz AT TIME ZONE 'UTC' AS k)
       SELECT u.model, u.purpose, t.kind,
              coalesce(sum(u."costUsd") FILTER (WHERE u."createdAt" >= w.p), 0)::float AS usd,
              (count(*) FILTER (WHERE u."createdAt" >= w.p))::int AS calls,
              coalesce(sum(u."costUsd") FILTER (WHERE u."createdAt" >= w.m), 0)::float AS month,
              coalesce(sum(u."costUsd") FILTER (WHERE u."createdAt" >= w.k), 0)::float AS week
       FROM w, llm_usage u LEFT JOIN turn_records t ON t.id = u."turnId"
       WHERE u."createdAt" >= least(w.p, w.m, w.k)
       GROUP BY 1, 2, 3`,
      [ts(from), ts(month), ts(week)],
    ),
    sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM turn_records
       WHERE kind = 'user_request' AND "createdAt" >= $1::timestamptz AT TIME ZONE 'UTC'`,
      [ts(from)],
    ),
  ]);
  const yen = (usd: number) => ({ usd, yen: usd * jpyPerUsd });
  const sum = (f: (c: (typeof calls)[number]) => number, xs = calls) => xs.reduce((a, c) => a + Number(f(c)), 0);
  const conversations = turns[0]?.n ?? 0;
  const ofConversations = (c: { kind: string | null; purpose: string }) =>
    c.kind === 'user_request' || CONVERSATION_PURPOSES.includes(c.purpose);
  const byRow = new Map<string, CostRow>();
  for (const c of calls.filter((x) => x.calls > 0)) {
    const kind = kindOf(c.purpose, c.kind);
    const model = modelName(c.model);
    const key = `${kind}\u0000${model}`;
    const row: CostRow = byRow.get(key) ?? { kind, model, calls: 0, usd: 0, yen: 0, perConversation: null };
    row.calls += c.calls;
    row.usd += Number(c.usd);
    row.yen = row.usd * jpyPerUsd;
    if (ofConversations(c) && conversations > 0) row.perConversation = yen(row.usd / conversations);
    byRow.set(key, row);
  }
  const forConversations = calls.filter(ofConversations);
  const monthUsd = sum((c) => c.month);
  const elapsedDays = (now.getTime() - month.getTime()) / DAY;
  const left = Math.max(0, daysInMonth(now, timezone) - elapsedDays);
  return {
    days: range === '24h' ? 1 : 30,
    jpyPerUsd,
    conversations,
    perConversation: conversations > 0 ? yen(sum((c) => c.usd, forConversations) / conversations) : null,
    monthToDate: yen(monthUsd),
    forecast: yen(monthUsd + (sum((c) => c.week) / 7) * left),
    rows: [...byRow.values()].sort((a, b) => b.usd - a.usd),
  };
}
