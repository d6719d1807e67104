/**
 * Fires chat-made schedules (R-P1, R-P2): every instance's sweep reads the schedules whose next period has
 * come, works out the newest due period on the business calendar, and records it in one statement with what
 * it sends (schedule-store.ts). The period row's key makes exactly one instance fire each period; an
 * instance killed in the middle leaves nothing, so the next sweep anywhere fires it. Missed periods: the
 * newest is sent once inside the horizon when the schedule's catch-up is `once`, otherwise they are counted
 * as skipped. Reminder occurrences then go out like one-off reminders (quiet hours, snooze, cancel);
 * digests become scheduled-notice items (the Gate with the recipient as actor).
 */
import { readClosingDays, type BusinessCalendar } from '../core/business-calendar';
import type { Db } from '../db/prisma';
import type { Sql } from '../db/sql';
import type { Logger } from '../observability/logger';
import { noticeDedupeKey, type ScheduledNoticePayload } from './notices/fire';
import { parseQuietHours, quietUntil } from './notices/quiet-hours';
import { floorMinute } from './notices/periods';
import { nextOccurrence, RecurrenceRule } from './recurrence';
import { recordChatPeriod, updateChatSchedule, type OccurrenceReminder, type PeriodItem } from './schedule-store';

/** A period swept this long after its minute still counts as on time (a sweep tick, a busy database). */
export const ON_TIME_MS = 2 * 60_000;
/** How many missed periods are walked at most (an every-minute schedule down for a week). */
const MAX_WALK = 20_000;

export interface ChatSweepOptions {
  db: Db;
  sql: Sql;
  logger: Logger;
  instanceId: string;
  /** A missed period older than this is skipped and counted, not sent. */
  horizonMs: number;
  /** Schedules handled per sweep (the rest wait for the next tick). */
  limit?: number;
}

interface OrgFacts {
  timezone: string;
  quietHours: string | null;
  calendar: BusinessCalendar;
}

/** What the sweep did: periods it claimed, and the reminder rows and work items they created. */
export interface ChatSweepResult {
  claimed: number;
  created: number;
}

/** The newest period due at `now` from `next` on, how many periods it stands for, and the one after `now`. */
export function duePeriod(
  rule: RecurrenceRule,
  next: Date,
  now: Date,
  timezone: string,
  cal: BusinessCalendar,
): { period: Date; count: number; following: Date | null } {
  let period = next;
  let count = 1;
  let following = nextOccurrence(rule, period, timezone, cal);
  while (following && following.getTime() <= now.getTime() && count < MAX_WALK) {
    period = following;
    count++;
    following = nextOccurrence(rule, period, timezone, cal);
  }
  // After a long walk, jump to the first period after now (the rest are counted as one skip).
  if (following && following.getTime() <= now.getTime()) following = nextOccurrence(rule, now, timezone, cal);
  return { period, count, following };
}

/** One sweep over the chat schedules due at `now`. */
export async function fireDueChatSchedules(o: ChatSweepOptions, now: Date): Promise<ChatSweepResult> {
  const rows = await o.db.schedule.findMany({
    where: { source: 'chat', enabled: true, cancelledAt: null, nextRunAt: { lte: now } },
    orderBy: [{ nextRunAt: 'asc' }, { id: 'asc' }],
    take: o.limit ?? 2000,
  });
  if (rows.length === 0) return { claimed: 0, created: 0 };
  const orgIds = [...new Set(rows.map((r) => r.orgId))];
  const memberIds = [...new Set(rows.flatMap((r) => [r.ownerMemberId, r.targetMemberId]).filter((x) => x !== null))];
  const [orgs, members] = await Promise.all([
    o.db.organization.findMany({ where: { id: { in: orgIds } } }),
    o.db.member.findMany({ where: { orgId: { in: orgIds }, id: { in: memberIds } } }),
  ]);
  const facts = new Map<string, OrgFacts>(
    orgs.map((g) => [
      g.id,
      { timezone: g.timezone, quietHours: g.quietHours, calendar: { closingDays: readClosingDays(g.closingDays) } },
    ]),
  );
  const memberOf = (orgId: string, id: string | null) =>
    id ? members.find((m) => m.orgId === orgId && m.id === id) : undefined;
  let claimed = 0;
  let created = 0;
  for (const s of rows) {
    const org = facts.get(s.orgId);
    const rule = RecurrenceRule.safeParse(s.rule);
    const owner = memberOf(s.orgId, s.ownerMemberId);
    if (!org || !rule.success || !s.nextRunAt || !s.platform || !s.roomId || !owner?.active) {
      // A schedule that can no longer fire (its owner left, a broken rule) stops instead of failing every tick.
      await updateChatSchedule(o.db, s.id, { nextRunAt: null, enabled: false });
      o.logger.warn({ schedule: s.id }, 'chat schedule cannot fire (owner gone or rule unreadable): paused');
      continue;
    }
    try {
      const { period, count, following } = duePeriod(rule.data, s.nextRunAt, now, s.timezone, org.calendar);
      const late = now.getTime() - period.getTime();
      const send = late <= o.horizonMs && (s.catchUp === 'once' || late <= ON_TIME_MS);
      const status = !send ? 'skipped' : late <= ON_TIME_MS ? 'fired' : 'caught_up';
      const out = send ? outputOf(s, org, owner, memberOf(s.orgId, s.targetMemberId), period, now) : {};
      const res = await recordChatPeriod(
        o.sql,
        {
          scheduleId: s.id,
          period: floorMinute(period),
          status,
          skipped: send ? count - 1 : count,
          instanceId: o.instanceId,
          expectedNextRunAt: s.nextRunAt,
          nextRunAt: following,
        },
        out,
      );
      if (!res.claimed) continue;
      claimed++;
      created += res.enqueued;
      if (!send) o.logger.info({ schedule: s.id, skipped: count }, 'missed chat schedule periods skipped');
    } catch (err) {
      o.logger.warn({ schedule: s.id, err: (err as Error).name }, 'chat schedule sweep failed; retrying next tick');
    }
  }
  return { claimed, created };
}

type Row = Awaited<ReturnType<Db['schedule']['findMany']>>[number];
type MemberRow = { id: string; active: boolean; quietHours: string | null };

/** What one period of a schedule sends: a reminder row (reminders), or a digest work item. */
function outputOf(
  s: Row,
  org: OrgFacts,
  owner: MemberRow,
  target: MemberRow | undefined,
  period: Date,
  now: Date,
): { reminder?: OccurrenceReminder; items?: PeriodItem[] } {
  const base = { orgId: s.orgId, platform: s.platform!, roomId: s.roomId!, quietPolicy: s.quietPolicy };
  if (s.kind === 'reminder') {
    const who = target ?? owner;
    if (!who.active) return {};
    return { reminder: { ...base, memberId: who.id, text: s.text ?? '', audience: 'member', departmentId: null } };
  }
  if (s.kind === 'room_reminder') {
    const audience = s.departmentId ? 'department' : 'room';
    return { reminder: { ...base, memberId: owner.id, text: s.text ?? '', audience, departmentId: s.departmentId } };
  }
  // A digest of the owner's own tasks, held for (or skipped in) their quiet hours.
  const runAt = quietUntil(now, parseQuietHours(owner.quietHours ?? org.quietHours), org.timezone);
  if (runAt && s.quietPolicy === 'skip') return {};
  const payload: ScheduledNoticePayload = {
    kind: 'schedule',
    scheduleId: s.id,
    scheduleKind: 'daily_digest',
    period: floorMinute(period).toISOString(),
    orgId: s.orgId,
    memberId: owner.id,
    platform: s.platform!,
    roomId: s.roomId!,
  };
  return {
    items: [
      {
        payload,
        orderingKey: `notice:${s.platform}:${s.roomId}:${owner.id}`,
        dedupeKey: noticeDedupeKey(s.id, floorMinute(period), owner.id),
        runAt,
      },
    ],
  };
}
