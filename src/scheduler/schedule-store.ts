/**
 * The only writer of `schedules` and `schedule_runs`: the directory's schedules (inside the directory
 * import's transaction), chat-made schedules (create, pause, resume, change, cancel), and the period rows
 * that make every schedule fire exactly once across instances (R-P2, R-Q4).
 */
import { randomUUID } from 'node:crypto';
import type { Db, Prisma } from '../db/prisma';
import type { Sql } from '../db/sql';
import { enqueueSelectCte } from '../queue/work-queue';
import { diffRows, type RowDiff } from '../db/row-diff';
import { reminderOccurrenceCte } from './reminders';

/** A directory schedule row as the directory import writes it. */
export interface DirectoryScheduleRow {
  id: string;
  orgId: string;
  kind: string;
  cron: string;
  timezone: string;
  platform: string | null;
  roomId: string | null;
  enabled: boolean;
}

/**
 * Makes the organisation's directory schedules match `desired` inside the import's transaction (chat-made
 * schedules are never touched: they are their owners'). Returns the diff for the import summary.
 */
export async function syncDirectorySchedules(
  tx: Prisma.TransactionClient,
  orgId: string,
  desired: readonly DirectoryScheduleRow[],
): Promise<RowDiff<DirectoryScheduleRow>> {
  const existing = await tx.schedule.findMany({
    where: { orgId, source: 'directory', id: { startsWith: `${orgId}:` } },
  });
  const s = diffRows(existing, desired, (r) => String(r.id));
  if (s.remove.length > 0)
    await tx.schedule.deleteMany({ where: { orgId, id: { in: s.remove.map((r) => String(r.id)) } } });
  if (s.create.length > 0) await tx.schedule.createMany({ data: s.create });
  for (const x of s.update) await tx.schedule.update({ where: { id: x.id }, data: x });
  return s;
}

/**
 * Exactly-once across instances for a system job (retention): the first instance to insert the fire key
 * runs it; the others see the key and skip it. Fire keys name the job and its period.
 */
export async function claimFireKey(db: Db, scheduleId: string, fireKey: string): Promise<boolean> {
  const res = await db.scheduleRun.createMany({ data: [{ fireKey, scheduleId }], skipDuplicates: true });
  return res.count === 1;
}

/** One work item a period creates (a notification). */
export interface PeriodItem {
  payload: unknown;
  orderingKey: string;
  dedupeKey: string;
  /** Set when the notice waits for quiet hours to end; otherwise it may run at once. */
  runAt: Date | null;
}

/** What one period left in `schedule_runs`. */
export interface PeriodRecord {
  scheduleId: string;
  period: Date;
  status: 'fired' | 'caught_up' | 'skipped';
  skipped: number;
  instanceId: string;
}

const fireKeyOf = (rec: PeriodRecord): string => `${rec.scheduleId}@${rec.period.toISOString()}`;

const itemRows = (items: readonly PeriodItem[]): string =>
  JSON.stringify(
    items.map((i) => ({
      payload: i.payload,
      orderingKey: i.orderingKey,
      dedupeKey: i.dedupeKey,
      runAt: i.runAt?.toISOString() ?? null,
    })),
  );

const ITEMS_CTE = enqueueSelectCte(
  'ins',
  `
       SELECT 'notification', x.payload, x."orderingKey", x."dedupeKey", 3,
         coalesce(x."runAt"::timestamptz AT TIME ZONE 'UTC', now())
       FROM jsonb_to_recordset($8::jsonb) AS x(payload jsonb, "orderingKey" text, "dedupeKey" text, "runAt" text)
       WHERE EXISTS (SELECT 1 FROM run)`,
  { runAt: true },
);

/**
 * Records a directory schedule's period and creates its work items in ONE statement (R-P2): the period
 * row's unique key lets exactly one instance insert it, and its items go in with it or not at all. An
 * instance that dies in the middle leaves nothing behind, so another instance (or its own catch-up) fires
 * the period instead. Returns whether this call claimed the period and how many items it created.
 */
export async function recordPeriod(
  sql: Sql,
  rec: PeriodRecord,
  items: readonly PeriodItem[],
): Promise<{ claimed: boolean; enqueued: number }> {
  const [r] = await sql<{ claimed: number; enqueued: number }>(
    `WITH run AS (
       INSERT INTO schedule_runs ("fireKey", "scheduleId", period, "firedBy", status, recipients, skipped)
       VALUES ($1, $2, $3::timestamptz AT TIME ZONE 'UTC', $4, $5, $6, $7)
         ON CONFLICT ("fireKey") DO NOTHING RETURNING 1),
     mark AS (
       UPDATE schedules SET "lastFiredAt" = $3::timestamptz AT TIME ZONE 'UTC'
       WHERE id = $2 AND $5 <> 'skipped' AND EXISTS (SELECT 1 FROM run) RETURNING 1),
     ${ITEMS_CTE}
     SELECT (SELECT count(*) FROM run)::int AS claimed, (SELECT count(*) FROM ins)::int AS enqueued,
       (SELECT count(*) FROM mark)::int AS marked`,
    [
      fireKeyOf(rec),
      rec.scheduleId,
      rec.period.toISOString(),
      rec.instanceId,
      rec.status,
      items.length,
      rec.skipped,
      itemRows(items),
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

/** The reminder one chat-schedule period posts (a reminder or a room reminder). */
export interface OccurrenceReminder {
  orgId: string;
  platform: string;
  roomId: string;
  memberId: string;
  text: string;
  audience: 'member' | 'room' | 'department';
  departmentId: string | null;
  quietPolicy: string;
}

/**
 * Records a chat schedule's period in ONE statement (R-P2): the period row (exactly one instance inserts
 * it), what the period sends (the occurrence's reminder row, or work items for a digest) and the schedule's
 * next period. Only while the schedule still stands as the sweep read it (`nextRunAt` unchanged: not
 * paused, changed or cancelled in between). Returns whether this call claimed the period.
 */
export async function recordChatPeriod(
  sql: Sql,
  rec: PeriodRecord & { expectedNextRunAt: Date; nextRunAt: Date | null },
  out: { reminder?: OccurrenceReminder; items?: readonly PeriodItem[] },
): Promise<{ claimed: boolean; enqueued: number }> {
  const rem = out.reminder;
  const items = out.items ?? [];
  const [r] = await sql<{ claimed: number; enqueued: number }>(
    `WITH ok AS (
       SELECT 1 FROM schedules WHERE id = $2 AND enabled AND "cancelledAt" IS NULL
         AND "nextRunAt" = $9::timestamptz AT TIME ZONE 'UTC'),
     run AS (
       INSERT INTO schedule_runs ("fireKey", "scheduleId", period, "firedBy", status, recipients, skipped)
       SELECT $1, $2, $3::timestamptz AT TIME ZONE 'UTC', $4, $5, $6, $7 WHERE EXISTS (SELECT 1 FROM ok)
         ON CONFLICT ("fireKey") DO NOTHING RETURNING 1),
     adv AS (
       UPDATE schedules SET "nextRunAt" = $10::timestamptz AT TIME ZONE 'UTC',
         "lastFiredAt" = CASE WHEN $5 <> 'skipped' THEN $3::timestamptz AT TIME ZONE 'UTC' ELSE "lastFiredAt" END
       WHERE id = $2 AND "nextRunAt" = $9::timestamptz AT TIME ZONE 'UTC' RETURNING 1),
     ${ITEMS_CTE},
     ${reminderOccurrenceCte(
       'rem',
       `SELECT $11, x."orgId", x.platform, x."roomId", x."memberId", x.text, $3::timestamptz AT TIME ZONE 'UTC',
          $1, $2, x.audience, x."departmentId", x."quietPolicy"
        FROM jsonb_to_recordset($12::jsonb) AS x("orgId" text, platform text, "roomId" text, "memberId" text,
          text text, audience text, "departmentId" text, "quietPolicy" text)
        WHERE EXISTS (SELECT 1 FROM run)`,
     )}
     SELECT (SELECT count(*) FROM run)::int AS claimed,
       ((SELECT count(*) FROM ins) + (SELECT count(*) FROM rem))::int AS enqueued,
       (SELECT count(*) FROM adv)::int AS advanced`,
    [
      fireKeyOf(rec),
      rec.scheduleId,
      rec.period.toISOString(),
      rec.instanceId,
      rec.status,
      items.length + (rem ? 1 : 0),
      rec.skipped,
      itemRows(items),
      rec.expectedNextRunAt.toISOString(),
      rec.nextRunAt?.toISOString() ?? null,
      randomUUID(),
      JSON.stringify(rem ? [rem] : []),
    ],
  );
  return { claimed: r?.claimed === 1, enqueued: r?.enqueued ?? 0 };
}

/** A chat-made schedule as the tools create it. */
export interface NewChatSchedule {
  orgId: string;
  kind: 'reminder' | 'room_reminder' | 'digest';
  ownerMemberId: string;
  targetMemberId: string | null;
  departmentId: string | null;
  platform: string;
  roomId: string;
  text: string | null;
  rule: unknown;
  timezone: string;
  catchUp: 'once' | 'skip';
  quietPolicy: 'deliver' | 'skip';
  nextRunAt: Date | null;
  idempotencyKey: string | null;
}

/** Stores a chat-made schedule (id `chat:<uuid>`, never a directory id). */
export function createChatSchedule(db: Db, s: NewChatSchedule) {
  return db.schedule.create({
    data: { ...s, id: `chat:${randomUUID()}`, source: 'chat', cron: '', rule: s.rule as Prisma.InputJsonValue },
  });
}

/** What a change of a chat schedule may set. */
export interface ChatScheduleChange {
  enabled?: boolean;
  text?: string;
  rule?: unknown;
  catchUp?: 'once' | 'skip';
  quietPolicy?: 'deliver' | 'skip';
  nextRunAt?: Date | null;
  cancelledAt?: Date;
}

/** Pauses, resumes, changes or cancels a chat schedule that is not cancelled; returns whether it did. */
export async function updateChatSchedule(db: Db, id: string, change: ChatScheduleChange): Promise<boolean> {
  const { rule, ...rest } = change;
  const { count } = await db.schedule.updateMany({
    where: { id, source: 'chat', cancelledAt: null },
    data: { ...rest, ...(rule === undefined ? {} : { rule: rule as Prisma.InputJsonValue }) },
  });
  return count === 1;
}
