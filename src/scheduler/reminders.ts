/**
 * The `reminders` table's only writer: one-off reminders asked for in chat, occurrences of chat-made
 * recurring reminders (written by the schedule sweep through {@link reminderOccurrenceCte}), snoozes, and
 * every status change on the way out (scheduled → queued → sending → sent; cancelled, skipped, shadow).
 * Quiet hours apply here, to every reminder: one due in the recipient's quiet hours waits until they end,
 * or is skipped when its quiet-hours policy says so (R-P3).
 */
import type { Db } from '../db/prisma';
import type { Sql } from '../db/sql';
import { enqueueSelectCte } from '../queue/work-queue';
import type { Logger } from '../observability/logger';
import { parseQuietHours, quietUntil } from './notices/quiet-hours';

/** Reminder states in which the notice has not started to go out: cancelling still stops it. */
export const CANCELLABLE_REMINDER = ['scheduled', 'queued'];

/** Who a reminder speaks to: the member (mentioned), the room, or a department's members (mentioned). */
export type ReminderAudience = 'member' | 'room' | 'department';
/** In quiet hours: deliver when they end, or skip the reminder. */
export type QuietPolicy = 'deliver' | 'skip';

export interface NewReminder {
  orgId: string;
  platform: string;
  roomId: string;
  memberId: string;
  text: string;
  remindAt: Date;
  idempotencyKey: string | null;
  quietPolicy?: QuietPolicy;
  snoozedFromId?: string | null;
}

/** Stores a one-off (or snoozed) reminder. */
export function createReminder(db: Db, r: NewReminder) {
  return db.reminder.create({
    data: { ...r, quietPolicy: r.quietPolicy ?? 'deliver', snoozedFromId: r.snoozedFromId ?? null },
  });
}

/** Cancels a reminder that has not started to go out; returns whether this call cancelled it. */
export async function cancelReminder(db: Db, id: string): Promise<boolean> {
  const { count } = await db.reminder.updateMany({
    where: { id, status: { in: CANCELLABLE_REMINDER } },
    data: { status: 'cancelled' },
  });
  return count === 1;
}

/** True when this notice may go out: moved queued → sending now, or left `sending` by an earlier attempt. */
export async function claimReminderForSending(db: Db, id: string): Promise<boolean> {
  const { count } = await db.reminder.updateMany({ where: { id, status: 'queued' }, data: { status: 'sending' } });
  if (count === 1) return true;
  const now = await db.reminder.findUnique({ where: { id }, select: { status: true } });
  return now?.status === 'sending';
}

/** The end state of a reminder's notice: sent, shadow (shadow mode) or cancelled (its member is gone). */
export async function finishReminder(db: Db, id: string, status: 'sent' | 'shadow' | 'cancelled'): Promise<void> {
  await db.reminder.update({ where: { id }, data: { status } });
}

/**
 * CTE `name` inserting the reminder of one chat-schedule occurrence (for the schedule sweep's one statement):
 * `select` yields orgId, platform, roomId, memberId, text, remindAt, idempotencyKey, scheduleId, audience,
 * departmentId, quietPolicy. The idempotency key (schedule and period) makes a repeated insert a no-op.
 */
export function reminderOccurrenceCte(name: string, select: string): string {
  return `${name} AS (INSERT INTO reminders (id, "orgId", platform, "roomId", "memberId", text, "remindAt",
      "idempotencyKey", "scheduleId", audience, "departmentId", "quietPolicy")
    ${select} ON CONFLICT ("idempotencyKey") DO NOTHING RETURNING 1)`;
}

/**
 * Reminders due at `now` that fall in their recipient's quiet hours (the member's, else the organisation's;
 * the organisation's for room and department reminders) are moved to the end of the quiet hours, or marked
 * `skipped` when their policy is skip. Every instance computes the same, and each update is conditional on
 * the row being unchanged, so instances racing here agree.
 */
async function holdQuietReminders(sql: Sql, now: Date, limit: number): Promise<void> {
  const rows = await sql<{ id: string; remindAt: Date; quietPolicy: string; quiet: string | null; tz: string }>(
    `SELECT r.id, r."remindAt", r."quietPolicy", o.timezone AS tz,
       CASE WHEN r.audience = 'member' THEN coalesce(m."quietHours", o."quietHours") ELSE o."quietHours" END AS quiet
     FROM reminders r JOIN organizations o ON o.id = r."orgId"
     LEFT JOIN members m ON m."orgId" = r."orgId" AND m.id = r."memberId"
     WHERE r.status = 'scheduled' AND r."remindAt" <= $1
     ORDER BY r."remindAt" LIMIT $2`,
    [now, limit],
  );
  const held = rows.flatMap((r) => {
    const until = quietUntil(now, parseQuietHours(r.quiet), r.tz);
    return until ? [{ id: r.id, was: new Date(r.remindAt).toISOString(), until, skip: r.quietPolicy === 'skip' }] : [];
  });
  if (held.length === 0) return;
  await sql(
    `UPDATE reminders r SET
       status = CASE WHEN x.skip THEN 'skipped' ELSE r.status END,
       "remindAt" = CASE WHEN x.skip THEN r."remindAt" ELSE x.until::timestamptz AT TIME ZONE 'UTC' END
     FROM jsonb_to_recordset($1::jsonb) AS x(id text, was text, until text, skip boolean)
     WHERE r.id = x.id AND r.status = 'scheduled' AND r."remindAt" = x.was::timestamptz AT TIME ZONE 'UTC'`,
    [JSON.stringify(held.map((h) => ({ ...h, until: h.until.toISOString() })))],
  );
}

/**
 * Turns due reminders into `notification` work items (R-P2) in one statement, after holding those in quiet
 * hours: each reminder gets a work item keyed `reminder:<id>` (so several instances, or a repeated sweep,
 * enqueue it once) and is marked `queued`. Returns how many were enqueued.
 */
export async function enqueueDueReminders(sql: Sql, now: Date = new Date(), limit = 200): Promise<number> {
  await holdQuietReminders(sql, now, limit);
  const rows = await sql<{ n: number }>(
    `WITH due AS (
       UPDATE reminders SET status = 'queued'
       WHERE id IN (SELECT id FROM reminders WHERE status = 'scheduled' AND "remindAt" <= $1
                    ORDER BY "remindAt" LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING id, platform, "roomId", "memberId", audience),
     ${enqueueSelectCte(
       'ins',
       `
       SELECT 'notification', jsonb_build_object('kind', 'reminder', 'reminderId', id),
              'notice:' || platform || ':' || "roomId" || ':'
                || CASE WHEN audience = 'member' THEN "memberId" ELSE 'room' END,
              'reminder:' || id, 3
       FROM due`,
     )}
     SELECT (SELECT count(*) FROM ins)::int AS n`,
    [now, limit],
  );
  return rows[0]?.n ?? 0;
}

/** Every due reminder at `now`, in batches (a burst of a thousand occurrences at one minute is not 15 s per 200). */
export async function enqueueAllDueReminders(sql: Sql, now: Date, batch = 500): Promise<number> {
  let total = 0;
  for (let i = 0; i < 100; i++) {
    const n = await enqueueDueReminders(sql, now, batch);
    total += n;
    if (n < batch) break;
  }
  return total;
}

/**
 * Runs `tick` every `intervalMs` (the due chat-schedule periods, then the due reminders: once across
 * instances, by the run row and the item's dedupe key), telling `onEnqueued` how many items were created;
 * a failed tick is logged and retried on the next one. Returns its stop.
 */
export function startReminderSweep(o: {
  sql: Sql;
  logger: Logger;
  intervalMs: number;
  onEnqueued: (n: number) => void;
  now?: () => Date;
  /** Runs first on every tick (the chat-schedule sweep); returns how many items it created. */
  before?: (now: Date) => Promise<number>;
}): () => void {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    const now = o.now?.() ?? new Date();
    (async () => {
      const fired = o.before ? await o.before(now) : 0;
      if (fired > 0) o.onEnqueued(fired);
      o.onEnqueued(await enqueueAllDueReminders(o.sql, now));
    })()
      .catch((err: Error) => o.logger.warn({ err: err.name }, 'reminder sweep failed; retrying on the next tick'))
      .finally(() => {
        busy = false;
      });
  }, o.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
