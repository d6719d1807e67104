import type { Db } from '../../db/prisma';
import type { Schedule } from '../../generated/prisma/client';
import type { Sql } from '../../db/sql';
import { enqueueSelectCte } from '../../intake/work-queue';
import { dayBounds, type NoticeKind } from './facts';
import { noticesEnabled } from './preferences';
import { parseQuietHours, quietUntil } from './quiet-hours';

/** A schedule as the scheduler reads it from the database (directory import, R-P1). */
export type ScheduleRow = Omit<Schedule, 'lastFiredAt'>;

/** The payload of a scheduled notice's `notification` work item. */
export interface ScheduledNoticePayload {
  kind: 'schedule';
  scheduleId: string;
  scheduleKind: NoticeKind;
  /** ISO instant of the period (the cron minute). */
  period: string;
  orgId: string;
  memberId: string;
  platform: string;
  roomId: string;
}

/** One work item to create for a period. */
export interface NoticeItem {
  payload: ScheduledNoticePayload;
  orderingKey: string;
  dedupeKey: string;
  /** Set when the notice waits for quiet hours to end; otherwise it may run at once. */
  runAt: Date | null;
}

/** `notice:<schedule>:<period>:<member>` — one notice per (schedule, period, recipient) (R-P2). */
export function noticeDedupeKey(scheduleId: string, period: Date, memberId: string): string {
  return `notice:${scheduleId}:${period.toISOString()}:${memberId}`;
}

/**
 * Who hears from a schedule in this period: active members with an account on the room's platform
 * (the console needs none), notices enabled for them (own choice, then directory), and — a cheap
 * pre-filter — something to say (open tasks due by tomorrow, delegated tasks due today, overdue tasks
 * for level 3+, active goals). The notice runner decides the final content for each of them.
 * A notice due in quiet hours (member's, else the organisation's) is held until they end (R-P3).
 */
export async function periodItems(
  db: Db,
  s: ScheduleRow & { platform: string; roomId: string },
  period: Date,
  now: Date,
): Promise<NoticeItem[]> {
  const kind = s.kind as NoticeKind;
  const org = await db.organization.findUnique({ where: { id: s.orgId } });
  if (!org) return [];
  const [members, prefs, subjects] = await Promise.all([
    db.member.findMany({
      where: { orgId: s.orgId, active: true },
      include: { accounts: { where: { platform: s.platform } } },
      orderBy: { id: 'asc' },
    }),
    db.noticePreference.findMany({ where: { orgId: s.orgId } }),
    membersWithSomethingToSay(db, s.orgId, kind, now, org.timezone),
  ]);
  const items: NoticeItem[] = [];
  for (const m of members) {
    if (s.platform !== 'console' && m.accounts.length === 0) continue;
    if (!subjects.has(m.id) && !(kind === 'daily_digest' && m.level >= 3 && subjects.has('*team'))) continue;
    if (
      !noticesEnabled(
        m.noticesOptOut,
        prefs.filter((p) => p.memberId === m.id),
        kind,
      )
    )
      continue;
    const quiet = parseQuietHours(m.quietHours ?? org.quietHours);
    items.push({
      payload: {
        kind: 'schedule',
        scheduleId: s.id,
        scheduleKind: kind,
        period: period.toISOString(),
        orgId: s.orgId,
        memberId: m.id,
        platform: s.platform,
        roomId: s.roomId,
      },
      orderingKey: `notice:${s.platform}:${s.roomId}:${m.id}`,
      dedupeKey: noticeDedupeKey(s.id, period, m.id),
      runAt: quietUntil(now, quiet, org.timezone),
    });
  }
  return items;
}

/** Member ids with something a notice of `kind` could say (`*team`: some task of the organisation is overdue). */
async function membersWithSomethingToSay(
  db: Db,
  orgId: string,
  kind: NoticeKind,
  now: Date,
  timezone: string,
): Promise<Set<string>> {
  if (kind === 'goal_checkin') {
    const goals = await db.goal.groupBy({ by: ['memberId'], where: { orgId, status: 'active' } });
    return new Set(goals.map((g) => g.memberId));
  }
  const { tomorrow, dayAfter } = dayBounds(now, timezone);
  const own = await db.task.groupBy({
    by: ['assigneeMemberId'],
    where: { orgId, status: 'open', dueAt: { lt: dayAfter } },
  });
  const ids = new Set(own.map((t) => t.assigneeMemberId));
  if (kind === 'daily_digest') {
    const given = await db.task.groupBy({
      by: ['createdByMemberId'],
      where: { orgId, status: 'open', dueAt: { lt: tomorrow } },
    });
    for (const g of given) if (g.createdByMemberId) ids.add(g.createdByMemberId);
    if ((await db.task.count({ where: { orgId, status: 'open', dueAt: { lt: now } } })) > 0) ids.add('*team');
  }
  return ids;
}

/** What one period left in `schedule_runs`. */
export interface PeriodRecord {
  scheduleId: string;
  period: Date;
  status: 'fired' | 'caught_up' | 'skipped';
  skipped: number;
  instanceId: string;
}

/**
 * Records a period and creates its work items in ONE statement (R-P2): the period row's unique key lets
 * exactly one instance insert it, and its items go in with it or not at all. An instance that dies in the
 * middle leaves nothing behind, so another instance (or its own catch-up) fires the period instead.
 * Returns whether this call claimed the period and how many items it created.
 */
export async function recordPeriod(
  sql: Sql,
  rec: PeriodRecord,
  items: readonly NoticeItem[],
): Promise<{ claimed: boolean; enqueued: number }> {
  const rows = items.map((i) => ({
    payload: i.payload,
    orderingKey: i.orderingKey,
    dedupeKey: i.dedupeKey,
    runAt: i.runAt?.toISOString() ?? null,
  }));
  const [r] = await sql<{ claimed: number; enqueued: number }>(
    `WITH run AS (
       INSERT INTO schedule_runs ("fireKey", "scheduleId", period, "firedBy", status, recipients, skipped)
       VALUES ($1, $2, $3::timestamptz AT TIME ZONE 'UTC', $4, $5, $6, $7)
         ON CONFLICT ("fireKey") DO NOTHING RETURNING 1),
     mark AS (
       UPDATE schedules SET "lastFiredAt" = $3::timestamptz AT TIME ZONE 'UTC'
       WHERE id = $2 AND $5 <> 'skipped' AND EXISTS (SELECT 1 FROM run) RETURNING 1),
     ${enqueueSelectCte(
       'ins',
       `
       SELECT 'notification', x.payload, x."orderingKey", x."dedupeKey", 3,
         coalesce(x."runAt"::timestamptz AT TIME ZONE 'UTC', now())
       FROM jsonb_to_recordset($8::jsonb) AS x(payload jsonb, "orderingKey" text, "dedupeKey" text, "runAt" text)
       WHERE EXISTS (SELECT 1 FROM run)`,
       { runAt: true },
     )}
     SELECT (SELECT count(*) FROM run)::int AS claimed, (SELECT count(*) FROM ins)::int AS enqueued,
       (SELECT count(*) FROM mark)::int AS marked`,
    [
      `${rec.scheduleId}@${rec.period.toISOString()}`,
      rec.scheduleId,
      rec.period.toISOString(),
      rec.instanceId,
      rec.status,
      items.length,
      rec.skipped,
      JSON.stringify(rows),
    ],
  );
  return { claimed: r?.claimed === 1, enqueued: r?.enqueued ?? 0 };
}

/** The newest recorded period of each schedule (one statement). */
export async function lastPeriods(sql: Sql, scheduleIds: readonly string[]): Promise<Map<string, Date>> {
  if (scheduleIds.length === 0) return new Map();
  const rows = await sql<{ id: string; last: string }>(
    `SELECT "scheduleId" AS id, to_char(max(period), 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS last
     FROM schedule_runs WHERE "scheduleId" = ANY($1::text[]) AND period IS NOT NULL GROUP BY 1`,
    [scheduleIds],
  );
  return new Map(rows.map((r) => [r.id, new Date(r.last)]));
}
