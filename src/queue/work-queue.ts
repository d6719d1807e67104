import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { Db } from '../db/prisma';
import { SqlParams, sqlRunner, type Sql } from '../db/sql';
import { newErrorId } from '../core/app-error';
import { currentTraceparent } from '../observability/tracing';
import { WORK_CHANNEL } from './work-notices';

/** Kinds of work (R-Q1). */
export type WorkType = 'user_request' | 'work' | 'notification';

export interface EnqueueInput {
  type: WorkType;
  payload: unknown;
  /** Items with the same ordering key run one at a time, oldest first (R-Q3). */
  orderingKey: string;
  /** Unique per logical item: a second enqueue with the same key is a duplicate (R-Q2). */
  dedupeKey: string;
  runAt?: Date;
  maxAttempts?: number;
  /** The span that stores the item (W3C traceparent; tracing on): the work's spans join its trace. */
  traceContext?: string;
}

export interface ClaimedItem {
  id: bigint;
  type: WorkType;
  payload: unknown;
  orderingKey: string;
  attempts: number;
  maxAttempts: number;
  /** Proof of ownership: only the current claimant may finish the item. */
  claimToken: string;
  dedupeKey: string;
  /** The span that stored the item, as a W3C traceparent (null: tracing was off). */
  traceContext: string | null;
  /**
   * Set when a heartbeat found the claim gone (it expired and another worker may have taken the item):
   * the worker must stop before any further effect.
   */
  claimLost?: boolean;
}

/** What storing an item gave: its id, or `duplicate` when its dedupe key existed already. */
export type Enqueued = { id: bigint; duplicate: false } | { id: null; duplicate: true };

/** A claimed row (the claim's RETURNING columns, or their JSON) as the item a handler runs. */
export function claimedItem(r: ClaimRow): ClaimedItem {
  return {
    id: BigInt(r.id),
    type: r.type as WorkType,
    payload: r.payload,
    orderingKey: r.orderingKey,
    attempts: r.attempts,
    maxAttempts: r.maxAttempts,
    claimToken: r.claimedBy,
    dedupeKey: r.dedupeKey,
    traceContext: r.traceContext,
  };
}

/** The columns of a claimed row ({@link ClaimRow}), as both claims return them. */
const CLAIMED_COLUMNS =
  'id::text AS id, type, payload, "orderingKey", attempts, "maxAttempts", "claimedBy", "dedupeKey", "traceContext"';

/** The kinds of work a claim may take: the caller's, or every kind. */
function claimTypes(types?: readonly WorkType[]): readonly WorkType[] {
  return types && types.length > 0 ? types : ['user_request', 'work', 'notification'];
}

/** Most items in one grouped intake insert. */
const MAX_GROUPED_INSERT = 200;

/** The claim condition of statements by the worker holding an item ($1 its id, $2 its claim token). */
const HELD = `id = $1::bigint AND "claimedBy" = $2 AND state = 'running'`;

/** What a handler reports: `completed` when it completed the item inside its own final statement. */
export interface WorkOutcome {
  completed: boolean;
}

/**
 * CTE `name`: marks the item done if this worker still holds its claim (RETURNING 1 when it did). The
 * turn's last statement includes it, so the turn's writes and the item's completion are one statement.
 */
export function completeCte(p: SqlParams, name: string, item: Pick<ClaimedItem, 'id' | 'claimToken'>): string {
  return `${name} AS (UPDATE work_items
    SET state = 'done', "finishedAt" = now(), "updatedAt" = now(), "claimExpiresAt" = NULL
    WHERE id = ${p.add(item.id.toString())}::bigint AND "claimedBy" = ${p.add(item.claimToken)} AND state = 'running'
    RETURNING 1)`;
}

/**
 * CTE `name`: enqueues the rows of `select` (columns type, payload, "orderingKey", "dedupeKey",
 * "maxAttempts" and, with `runAt`, "runAt", in that order); a dedupe key that exists is skipped.
 * RETURNING 1 per item enqueued.
 */
export function enqueueSelectCte(name: string, select: string, opts: { runAt?: boolean } = {}): string {
  const runAt = opts.runAt ? ', "runAt"' : '';
  return `${name} AS (INSERT INTO work_items (type, payload, "orderingKey", "dedupeKey", "maxAttempts"${runAt})
    ${select} ON CONFLICT ("dedupeKey") DO NOTHING RETURNING 1)`;
}

/**
 * CTE `name`: enqueues `items` (a dedupe key that exists is skipped); RETURNING 1 per item enqueued. For a
 * statement that stores items together with what they are about (a turn and its self-critique).
 */
export function enqueueValuesCte(
  p: SqlParams,
  name: string,
  items: readonly (EnqueueInput & { maxAttempts: number })[],
): string {
  const rows = items.map(
    (i) =>
      `(${p.add(i.type)}::text, ${p.add(JSON.stringify(i.payload))}::jsonb, ${p.add(i.orderingKey)}::text, ` +
      `${p.add(i.dedupeKey)}::text, ${p.add(i.maxAttempts)}::int)`,
  );
  return enqueueSelectCte(name, `SELECT * FROM (VALUES ${rows.join(', ')}) v`);
}

/** Deletes finished (done or failed) items last touched before `before` (retention); unfinished work stays. */
export async function purgeFinishedWork(db: Db, before: Date): Promise<number> {
  const { count } = await db.workItem.deleteMany({
    where: { state: { in: ['done', 'failed'] }, updatedAt: { lt: before } },
  });
  return count;
}

/** The outbox key of the reply to a user request (one reply per inbound message). */
export function replyKeyOf(item: Pick<ClaimedItem, 'dedupeKey'>): string {
  return `reply:${item.dedupeKey}`;
}

/** The error a worker stops with when it no longer holds its item (nothing more is done or posted). */
export class ClaimLostError extends Error {
  /** Never retried by this worker: another worker owns the item now. */
  readonly retryable = false;

  constructor() {
    super('work item claim lost: another worker owns it now');
    this.name = 'ClaimLostError';
  }
}

/**
 * An item that gave up (SPEC §5: failed, listed, alerted, never silent): it ended `failed` with `errorId`; when
 * `apology` a notification to tell the person was enqueued in the same statement ({@link APOLOGY_KIND}).
 */
export interface GaveUp {
  id: bigint;
  type: WorkType;
  /** What it was (`payload.kind`: background_work, reminder …), when it says. */
  kind: string | null;
  dedupeKey: string;
  errorId: string;
  apology: boolean;
}

/** Why an item whose worker died on every allowed attempt gave up (its recorded error says so). */
export const ABANDONED = 'abandoned: the worker stopped on every attempt';

/** The notification kind that tells a person their request gave up (`src/notices/apology.ts`). */
export const APOLOGY_KIND = 'apology';

/**
 * The error text of a failed attempt as the worker pool records it (`describeWorkError`): `[E-…] CODE: message`.
 * Its error id (the one the logs name) and code, when it has them.
 */
export function failureOf(text: string): { errorId: string | null; code: string | null } {
  const m = /^\[(E-[A-Z0-9]{7})\] ([A-Z_]+):/.exec(text);
  return { errorId: m?.[1] ?? null, code: m?.[2] ?? null };
}

/**
 * CTE `name`: the apology for the items of CTE `failed` (columns of work_items, just failed) that a person waits
 * on — user requests; background work reports its own end, a notice or an apology that fails is not followed by
 * another message (no loop). One per item (its dedupe key); in its conversation's order.
 */
function apologyCte(name: string, failed: string, code: string): string {
  return enqueueSelectCte(
    name,
    `SELECT 'notification', jsonb_build_object('kind', '${APOLOGY_KIND}', 'errorId', f."errorId", 'code', ${code},
       'failedKey', f."dedupeKey", 'message', f.payload), f."orderingKey", 'apology:' || f."dedupeKey", 3
     FROM ${failed} f WHERE f.type = 'user_request'`,
  );
}

export interface WorkQueueOptions {
  instanceId: string;
  claimTtlMs: number;
  defaultMaxAttempts: number;
  /** Backoff before a failed attempt runs again. */
  retryDelayMs?: (attempt: number) => number;
  /** The pool under the Prisma client, for the hot-path statements. */
  pool?: Pool;
  /** An item gave up ({@link GaveUp}): the service raises the `work_abandoned` alert and wakes a worker. */
  onGaveUp?: (g: GaveUp) => void;
  /**
   * Notify {@link WORK_CHANNEL} with the ids of the items stored by {@link enqueue} and {@link enqueueGrouped}, in
   * the same statement: for a process that stores what other processes claim (`HISHO_ROLE=intake`).
   */
  notify?: boolean;
}

export interface ClaimRow {
  id: string;
  type: string;
  payload: unknown;
  orderingKey: string;
  attempts: number;
  maxAttempts: number;
  claimedBy: string;
  dedupeKey: string;
  traceContext: string | null;
}

/**
 * The durable work queue in Postgres (seed 002 state kernel). Claims are atomic (`FOR UPDATE SKIP LOCKED`),
 * carry an expiry so a crashed worker's item is claimed again, and respect per-conversation order.
 */
export class WorkQueue {
  private readonly sql: Sql;
  /** Items waiting for the next grouped insert ({@link enqueueGrouped}). */
  private waiting: { input: EnqueueInput; done: (r: Enqueued) => void; fail: (err: unknown) => void }[] = [];
  private inserting = false;

  constructor(
    db: Db,
    private readonly opts: WorkQueueOptions,
  ) {
    this.sql = sqlRunner(db, opts.pool);
  }

  /** A new claim's proof of ownership: this instance's id and a random part. */
  private newClaimToken(): string {
    return `${this.opts.instanceId}:${randomUUID()}`;
  }

  /**
   * An insert (RETURNING `id` as text) that also notifies {@link WORK_CHANNEL} with the stored ids, once per
   * statement, when this queue notifies; the insert as it is otherwise.
   */
  private notifying(insert: string): string {
    if (!this.opts.notify) return insert;
    return `WITH i AS (${insert}),
      n AS (SELECT pg_notify('${WORK_CHANNEL}', string_agg(id, ',')) FROM i HAVING count(*) > 0)
      SELECT i.* FROM i LEFT JOIN n ON true`;
  }

  /** Stores an item; returns `duplicate: true` when the dedupe key exists already. */
  async enqueue(input: EnqueueInput): Promise<Enqueued> {
    const rows = await this.sql<{ id: string }>(
      this.notifying(`INSERT INTO work_items ("type", "payload", "orderingKey", "dedupeKey", "runAt", "maxAttempts",
                                              "traceContext")
       VALUES ($1, $2::jsonb, $3, $4, $5, $6, $7)
       ON CONFLICT ("dedupeKey") DO NOTHING
       RETURNING id::text AS id`),
      [
        input.type,
        JSON.stringify(input.payload),
        input.orderingKey,
        input.dedupeKey,
        input.runAt ?? new Date(),
        input.maxAttempts ?? this.opts.defaultMaxAttempts,
        input.traceContext ?? currentTraceparent() ?? null,
      ],
    );
    const row = rows[0];
    return row ? { id: BigInt(row.id), duplicate: false } : { id: null, duplicate: true };
  }

  /**
   * {@link enqueue} for intake under load (group commit): while one insert is on its way, the items that arrive
   * wait and then go in together in one statement, in arrival order. One message alone is inserted at once, as
   * before; a burst of webhooks costs a few statements and commits instead of one each. If a grouped insert
   * fails, each of its items is tried alone, so one bad item cannot lose the others.
   */
  enqueueGrouped(input: EnqueueInput): Promise<Enqueued> {
    return new Promise<Enqueued>((done, fail) => {
      // The span of the caller (the webhook's), taken now: the insert runs later, for a group.
      const traceContext = input.traceContext ?? currentTraceparent();
      this.waiting.push({ input: traceContext ? { ...input, traceContext } : input, done, fail });
      if (!this.inserting) void this.insertWaiting();
    });
  }

  private async insertWaiting(): Promise<void> {
    this.inserting = true;
    try {
      while (this.waiting.length > 0) {
        const group = this.waiting.splice(0, MAX_GROUPED_INSERT);
        if (group.length === 1) {
          const [one] = group;
          await this.enqueue(one!.input).then(one!.done, one!.fail);
          continue;
        }
        try {
          const ids = await this.insertMany(group.map((g) => g.input));
          group.forEach((g, i) =>
            g.done(ids[i] === null ? { id: null, duplicate: true } : { id: ids[i]!, duplicate: false }),
          );
        } catch {
          for (const g of group) await this.enqueue(g.input).then(g.done, g.fail);
        }
      }
    } finally {
      this.inserting = false;
    }
  }

  /**
   * One statement for many items, in order; the id of each, or null for a duplicate (also within the group). The
   * group travels as one JSON array (one `JSON.stringify`, parsed once by the database) rather than six arrays: the
   * driver escaped every payload into an array literal, which the database then parsed element by element.
   */
  private async insertMany(inputs: EnqueueInput[]): Promise<(bigint | null)[]> {
    const rows = await this.sql<{ id: string; dedupeKey: string }>(
      this.notifying(`INSERT INTO work_items ("type", "payload", "orderingKey", "dedupeKey", "runAt", "maxAttempts",
                                              "traceContext")
       SELECT g.t, g.p, g.o, g.d, coalesce(g.r, now()), g.m, g.c
       FROM jsonb_to_recordset($1::jsonb) AS g(t text, p jsonb, o text, d text, r timestamptz, m int, c text)
       ON CONFLICT ("dedupeKey") DO NOTHING
       RETURNING id::text AS id, "dedupeKey"`),
      [
        JSON.stringify(
          inputs.map((i) => ({
            t: i.type,
            p: i.payload,
            o: i.orderingKey,
            d: i.dedupeKey,
            r: i.runAt ?? null,
            m: i.maxAttempts ?? this.opts.defaultMaxAttempts,
            ...(i.traceContext ? { c: i.traceContext } : {}),
          })),
        ),
      ],
    );
    const stored = new Map(rows.map((r) => [r.dedupeKey, BigInt(r.id)]));
    return inputs.map((i) => {
      const id = stored.get(i.dedupeKey);
      // The first of two equal keys in one group got the row; the second is a duplicate.
      if (id !== undefined) stored.delete(i.dedupeKey);
      return id ?? null;
    });
  }

  /**
   * Claims the oldest runnable item: queued and due, or running with an expired claim; and no older
   * unfinished item with the same ordering key (so a "はい" never overtakes its request). People come first:
   * a message or a notice is claimed before any background `work` (self-critiques, summaries, long work), so
   * a backlog of background items never stands between a person and their answer.
   *
   * The statement is the database function `claim_work_item` (migration `20261123040000_work_queue_claim_function`),
   * whose settings fix its plan: a walk of the unfinished items in id order that stops at the first runnable one,
   * whatever the table's statistics say (as a plain statement, stale statistics gave a bitmap scan over every
   * finished item's leftover index entry: 6.3 ms a claim in a burst instead of under 1).
   */
  async claim(types?: WorkType[]): Promise<ClaimedItem | null> {
    const claimSql = `SELECT ${CLAIMED_COLUMNS} FROM claim_work_item($1, $2, $3::text[])`;
    const rows = await this.sql<ClaimRow>(claimSql, [this.newClaimToken(), this.opts.claimTtlMs, claimTypes(types)]);
    return rows[0] ? claimedItem(rows[0]) : null;
  }

  /** Marks an item done. False when the claim was lost (expired and taken by another worker). */
  async complete(item: ClaimedItem): Promise<boolean> {
    const p = new SqlParams();
    const rows = await this.sql<{ n: number }>(
      `WITH ${completeCte(p, 'w', item)} SELECT count(*)::int AS n FROM w`,
      p.values,
    );
    return rows[0]?.n === 1;
  }

  /**
   * Records a failed attempt: the item runs again after a backoff while attempts remain, otherwise it gives up:
   * marked failed with the (already redacted) error and its error id, and the person's apology enqueued in the same
   * statement ({@link apologyCte}). Returns the resulting state.
   */
  async fail(item: ClaimedItem, error: string, opts: { retryable: boolean }): Promise<'queued' | 'failed' | 'lost'> {
    const finalFailure = !opts.retryable || item.attempts >= item.maxAttempts;
    if (finalFailure) return this.giveUp(item, error);
    const delay = this.opts.retryDelayMs?.(item.attempts) ?? Math.min(30000, 500 * 2 ** item.attempts);
    const rows = await this.sql(
      `UPDATE work_items SET state = 'queued', "runAt" = now() + ($4::int * interval '1 millisecond'),
              "lastError" = $3, "updatedAt" = now(), "claimExpiresAt" = NULL
       WHERE ${HELD} RETURNING 1`,
      [item.id.toString(), item.claimToken, error, delay],
    );
    return rows.length === 1 ? 'queued' : 'lost';
  }

  private async giveUp(item: ClaimedItem, error: string): Promise<'failed' | 'lost'> {
    const failure = failureOf(error);
    const errorId = failure.errorId ?? newErrorId();
    const rows = await this.sql<{ apologies: number }>(
      `WITH f AS (UPDATE work_items SET state = 'failed', "finishedAt" = now(), "lastError" = $3, "errorId" = $4,
                    "updatedAt" = now(), "claimExpiresAt" = NULL
                  WHERE ${HELD} RETURNING *),
       ${apologyCte('a', 'f', '$5::text')}
       SELECT (SELECT count(*) FROM a)::int AS apologies FROM f`,
      [item.id.toString(), item.claimToken, error, errorId, failure.code ?? 'INTERNAL'],
    );
    if (rows.length !== 1) return 'lost';
    const { id, type, dedupeKey } = item;
    const kind = (item.payload as { kind?: unknown } | null)?.kind;
    this.opts.onGaveUp?.({
      id,
      type,
      kind: typeof kind === 'string' ? kind : null,
      dedupeKey,
      errorId,
      apology: rows[0]!.apologies > 0,
    });
    return 'failed';
  }

  /** Gives an unfinished item back (graceful shutdown): the attempt does not count. */
  async release(item: ClaimedItem): Promise<void> {
    await this.sql(
      `UPDATE work_items SET state = 'queued', attempts = GREATEST(attempts - 1, 0), "claimExpiresAt" = NULL,
              "updatedAt" = now()
       WHERE ${HELD}`,
      [item.id.toString(), item.claimToken],
    );
  }

  /**
   * Items whose worker died on every allowed attempt (and once more, for the failure reply) give up (as in
   * {@link fail}), so a message that crashes the process cannot loop or block its conversation forever.
   */
  async failAbandoned(): Promise<number> {
    const rows = await this.sql<{
      id: string;
      type: WorkType;
      kind: string | null;
      dedupeKey: string;
      errorId: string;
      apology: boolean;
    }>(
      `WITH f AS (UPDATE work_items
                  SET state = 'failed', "lastError" = '${ABANDONED}',
                    "errorId" = 'E-' || upper(substr(md5(random()::text || id::text), 1, 7)),
                    "finishedAt" = now(), "updatedAt" = now()
                  WHERE state = 'running' AND "claimExpiresAt" < now() AND attempts > "maxAttempts" RETURNING *),
       ${apologyCte('a', 'f', "'INTERNAL'")}
       SELECT f.id::text AS id, f.type, f.payload->>'kind' AS kind, f."dedupeKey", f."errorId",
         f.type = 'user_request' AS apology FROM f`,
    );
    for (const r of rows) this.opts.onGaveUp?.({ ...r, id: BigInt(r.id) });
    return rows.length;
  }

  /** Extends a claim for long work. */
  async heartbeat(item: ClaimedItem): Promise<boolean> {
    const rows = await this.sql(
      `UPDATE work_items SET "claimExpiresAt" = now() + ($3::int * interval '1 millisecond')
       WHERE ${HELD} RETURNING 1`,
      [item.id.toString(), item.claimToken, this.opts.claimTtlMs],
    );
    return rows.length === 1;
  }

  /** Items waiting or running, by state (metrics). */
  async depth(): Promise<Record<string, number>> {
    const rows = await this.sql<{ state: string; n: number }>(
      `SELECT state, count(*)::int AS n FROM work_items WHERE state IN ('queued', 'running') GROUP BY state`,
    );
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }
}
