import type { Sql } from '../db/sql';
import { enqueueSelectCte } from '../intake/work-queue';
import type { Logger } from '../observability/logger';

/**
 * Turns due reminders into `notification` work items (R-P2) in one statement: each reminder gets a work
 * item keyed `reminder:<id>` (so several instances, or a repeated sweep, enqueue it once) and is marked
 * `queued`. Returns how many were enqueued.
 */
export async function enqueueDueReminders(sql: Sql, now: Date = new Date(), limit = 200): Promise<number> {
  const rows = await sql<{ n: number }>(
    `WITH due AS (
       UPDATE reminders SET status = 'queued'
       WHERE id IN (SELECT id FROM reminders WHERE status = 'scheduled' AND "remindAt" <= $1
                    ORDER BY "remindAt" LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING id, platform, "roomId", "memberId"),
     ${enqueueSelectCte(
       'ins',
       `
       SELECT 'notification', jsonb_build_object('kind', 'reminder', 'reminderId', id),
              'notice:' || platform || ':' || "roomId" || ':' || "memberId", 'reminder:' || id, 3
       FROM due`,
     )}
     SELECT (SELECT count(*) FROM ins)::int AS n`,
    [now, limit],
  );
  return rows[0]?.n ?? 0;
}

/**
 * Sweeps due reminders into work items every `intervalMs` (once across instances: the item's dedupe key), telling
 * `onEnqueued` how many; a failed sweep is logged and retried on the next tick. Returns its stop.
 */
export function startReminderSweep(o: {
  sql: Sql;
  logger: Logger;
  intervalMs: number;
  onEnqueued: (n: number) => void;
  now?: () => Date;
}): () => void {
  const timer = setInterval(() => {
    enqueueDueReminders(o.sql, o.now?.() ?? new Date())
      .then(o.onEnqueued)
      .catch((err: Error) => o.logger.warn({ err: err.name }, 'reminder sweep failed; retrying on the next tick'));
  }, o.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
