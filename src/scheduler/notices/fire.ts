import type { Db } from '../../db/prisma';
import type { Schedule } from '../../generated/prisma/client';
import { addDays, formatZonedDateTime, zonedParts } from '../../core/zoned-time';
import { noticesEnabled } from './preferences';
import { parseQuietHours, quietUntil } from './quiet-hours';

/** The kinds of scheduled notices (R-P1); the directory's `SCHEDULE_KINDS`. */
export type NoticeKind = 'deadline_reminder' | 'daily_digest' | 'goal_checkin';

/** Local day boundaries as instants: start of today, tomorrow and the day after (organisation time zone). */
export function dayBounds(now: Date, timezone: string): { today: Date; tomorrow: Date; dayAfter: Date } {
  const p = zonedParts(now, timezone);
  const at = (n: number) => new Date(formatZonedDateTime(addDays({ y: p.y, m: p.m, d: p.d }, n), '00:00', timezone));
  return { today: at(0), tomorrow: at(1), dayAfter: at(2) };
}

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
