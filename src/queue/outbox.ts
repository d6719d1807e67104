import type { Pool } from 'pg';
import type { ChatSender, FoundMessage, OutboundReply, Platform, SendResult } from '../core/chat';
import type { Db } from '../db/prisma';
import { pgText, SqlParams, sqlRunner, type Sql } from '../db/sql';
import { AppError } from '../core/app-error';
import { ClaimLostError, type ClaimedItem } from './work-queue';

/** The work item a message is sent for: only the worker holding its claim may post. */
export type WorkClaim = Pick<ClaimedItem, 'id' | 'claimToken' | 'claimLost'>;

/** What an earlier attempt left on an outbox row. */
export interface PriorPost {
  status: string;
  /** Claim token of the attempt that took the row to post it (null: nobody got that far). */
  claimedBy: string | null;
  createdAt: Date;
  platformMessageId: string | null;
}

/** True when an earlier attempt may have posted this message: look for it before posting again. */
export function mayHavePosted(prior: Pick<PriorPost, 'status' | 'claimedBy'> | null): boolean {
  return prior !== null && (prior.status === 'uncertain' || (prior.status === 'sending' && prior.claimedBy !== null));
}

/**
 * The margin a claim of `claimTtlMs` must have left before its worker posts: a third of it (the worker pool's
 * heartbeat renews the claim every third, so a held claim never has less).
 */
export function postingMarginMs(claimTtlMs: number): number {
  return Math.floor(claimTtlMs / 3);
}

/** Options of the {@link Outbox}. */
export interface OutboxOptions {
  /** A claim must have at least this long to run before its worker may post (default 10 s). */
  claimMarginMs?: number;
  /** Wait before looking for a message whose post timed out (default 2 s: ChatWork may still be writing it). */
  reconcileDelayMs?: number;
  /** The pool under the Prisma client, for the claim check on the hot path. */
  pool?: Pool;
  sleep?: (ms: number) => Promise<void>;
  /** A monotonic clock in ms (default `performance.now`): how long a take made before the post still holds. */
  monotonic?: () => number;
}

/**
 * The single writer of `outbound_messages`. Sends bot messages through the adapters, at most once per key:
 * - a row is reserved before sending and marked `sent` after; a key already `sent` is never posted again;
 * - the row is taken by the worker that holds the work item's claim, in one statement that also checks the
 *   claim still has time to run, so a worker that lost its claim (missed heartbeat) posts nothing; a turn's first
 *   statement takes it ({@link takenAt}), and the post relies on that take only while the claim, as the take saw
 *   it, still has that time left (a claim is taken over only once it has expired);
 * - a post that may have landed (timeout, 5xx) is marked `uncertain` and looked for among the room's messages
 *   — after a short wait, and again by the next attempt — before it is ever posted again; so is a row an
 *   earlier attempt took and never finished (a crash between posting and recording).
 */
export class Outbox {
  private readonly senders = new Map<Platform, ChatSender>();
  private readonly sql: Sql;
  private readonly marginMs: number;
  private readonly reconcileDelayMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly monotonic: () => number;

  constructor(db: Db, opts: OutboxOptions = {}) {
    this.sql = sqlRunner(db, opts.pool);
    this.marginMs = opts.claimMarginMs ?? 10_000;
    this.reconcileDelayMs = opts.reconcileDelayMs ?? 2_000;
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.monotonic = opts.monotonic ?? (() => performance.now());
  }

  register(sender: ChatSender): void {
    this.senders.set(sender.platform, sender);
  }

  hasSender(platform: Platform): boolean {
    return this.senders.has(platform);
  }

  /** True when a message was already delivered under `dedupeKey` (nothing is reserved). */
  async delivered(dedupeKey: string): Promise<boolean> {
    const rows = await this.sql(`SELECT 1 FROM outbound_messages WHERE "dedupeKey" = $1 AND status = 'sent'`, [
      dedupeKey,
    ]);
    return rows.length === 1;
  }

  /** Reserves a key. Returns null when newly reserved, otherwise what an earlier attempt left. */
  async reserve(
    dedupeKey: string,
    meta: { platform: string; roomId: string; body?: string },
  ): Promise<PriorPost | null> {
    const p = new SqlParams();
    const reserve = reserveCte(p, 'r', {
      dedupeKey,
      platform: meta.platform,
      roomId: meta.roomId,
      body: meta.body ?? '',
    });
    const rows = await this.sql<PriorRow & { reserved: number }>(
      `WITH ${reserve} SELECT (SELECT count(*) FROM r)::int AS reserved, ${priorColumns('o')}
       FROM (SELECT 1) one LEFT JOIN outbound_messages o ON o."dedupeKey" = ${p.add(dedupeKey)}`,
      p.values,
    );
    const row = rows[0]!;
    return row.reserved === 1 ? null : priorPost(row);
  }

  /**
   * Looks for the message an earlier attempt may have posted under `dedupeKey` (the adapter's
   * `findPosted`); if it is there, the row is marked sent with it. Null when it is not found or the
   * platform cannot look. Lookup failures propagate: nothing is posted while it is unknown.
   */
  async reconcile(dedupeKey: string, reply: OutboundReply, since: Date): Promise<FoundMessage | null> {
    const sender = this.senders.get(reply.platform);
    if (!sender?.findPosted) return null;
    const found = await sender.findPosted({ ...reply, idempotencyKey: dedupeKey }, since);
    if (found)
      await this.markSent(deliveryRecord(dedupeKey, found.text ?? reply.text, found, found.sentAt ?? new Date()));
    return found;
  }

  /**
   * Posts a reserved key under the work item's claim and marks it sent. A post that may have landed is
   * looked for once after a short wait; if it is not found the error says so (`uncertain`) and the row
   * stays `uncertain`, for the next attempt to reconcile. With `markLater` the caller marks the row sent in
   * its own next statement ({@link markSentCte}; a turn's last statement): until then the row is `sending`
   * under this claim, which a retry treats as possibly posted and looks for before posting again.
   * `postedAt`: when the post began (what {@link deliveryRecord} records as the message's `sentAt`). With
   * `heldUntil` (the take a turn's first statement made, {@link takenAt}; decision 0012) the row is not taken again
   * while that take holds.
   */
  async deliver(
    dedupeKey: string,
    reply: OutboundReply,
    claim?: WorkClaim,
    opts: { markLater?: boolean; heldUntil?: number } = {},
  ): Promise<SendResult & { postedAt: Date }> {
    const sender = this.senders.get(reply.platform);
    if (!sender) throw new AppError('EXTERNAL_API_FAILED', `no sender for platform ${reply.platform}`);
    if (!this.holds(claim, opts.heldUntil)) await this.take(dedupeKey, claim);
    const marked = { ...reply, idempotencyKey: dedupeKey };
    const postedAt = new Date();
    let res: SendResult;
    try {
      res = await sender.send(marked);
    } catch (err) {
      const app =
        err instanceof AppError
          ? err
          : new AppError('EXTERNAL_API_FAILED', `send failed on ${reply.platform}`, { cause: err });
      await this.record(dedupeKey, app.uncertain ? 'uncertain' : 'failed', `${app.code}: ${app.message}`);
      if (!app.uncertain) throw app;
      await this.sleep(this.reconcileDelayMs);
      const found = await this.reconcile(dedupeKey, marked, new Date(Date.now() - 60_000)).catch(() => null);
      if (found) return { ...found, postedAt };
      throw app;
    }
    if (!opts.markLater) await this.markSent(deliveryRecord(dedupeKey, reply.text, res, postedAt));
    return { ...res, postedAt };
  }

  /** Reserve → (look for an earlier attempt's post) → deliver: at most once per key. */
  async send(dedupeKey: string, reply: OutboundReply, claim?: WorkClaim): Promise<SendResult & { skipped: boolean }> {
    const prior = await this.reserve(dedupeKey, { platform: reply.platform, roomId: reply.roomId, body: reply.text });
    if (prior?.status === 'sent') return { skipped: true, platformMessageId: prior.platformMessageId ?? undefined };
    if (mayHavePosted(prior)) {
      const found = await this.reconcile(dedupeKey, reply, prior!.createdAt);
      if (found) return { ...found, skipped: true };
    }
    return { ...(await this.deliver(dedupeKey, reply, claim)), skipped: false };
  }

  /** Marks a key as delivered (on the hot path: one statement on the pool). */
  private markSent(d: Delivered): Promise<unknown> {
    const p = new SqlParams();
    const cte = markSentCte(p, 'o', d);
    return this.sql(`WITH ${cte} SELECT 1`, p.values);
  }

  /**
   * The take another statement made (a turn's first statement, {@link takenWithColumns}): the time on {@link clock}
   * until which its claim is held for certain, or undefined when it did not take the row (the post takes as usual).
   * `sentAt` is {@link clock} read before that statement was sent, `leftMs` the ms its claim had left as the
   * database saw it (null: not taken there).
   */
  takenAt(sentAt: number, leftMs: number | null): number | undefined {
    return leftMs === null ? undefined : sentAt + leftMs;
  }

  /** The outbox's monotonic clock (ms), for {@link takenAt}. */
  clock(): number {
    return this.monotonic();
  }

  /** True when a take made before the post ({@link takenAt}) still holds the row for `claim`, with the margin left. */
  private holds(claim: WorkClaim | undefined, heldUntil: number | undefined): boolean {
    if (!claim || heldUntil === undefined) return false;
    return !claim.claimLost && this.monotonic() + this.marginMs <= heldUntil;
  }

  /**
   * Takes the row for the worker holding `claim`, if that claim is still valid for at least the margin.
   * Throws (nothing posted) when the worker lost its claim.
   */
  private async take(dedupeKey: string, claim?: WorkClaim): Promise<void> {
    if (!claim) return;
    if (claim.claimLost) throw new ClaimLostError();
    if ((await this.takeRow(dedupeKey, claim)) === null) throw new ClaimLostError();
  }

  /**
   * The take's statement (a synchronous commit: the reservation and every earlier write of the turn are durable
   * before anything is posted). Returns the ms the claim had left as the database saw it, or null (not taken).
   */
  private async takeRow(dedupeKey: string, claim: WorkClaim): Promise<number | null> {
    const rows = await this.sql<{ left_ms: number }>(
      `UPDATE outbound_messages o SET "claimedBy" = $2
       FROM work_items w
       WHERE o."dedupeKey" = $1 AND o.status <> 'sent'
         AND w.id = $3::bigint AND w."claimedBy" = $2 AND w.state = 'running'
         AND w."claimExpiresAt" > now() + ($4::int * interval '1 millisecond')
       RETURNING (extract(epoch FROM w."claimExpiresAt" - now()) * 1000)::float8 AS left_ms`,
      [dedupeKey, claim.claimToken, claim.id.toString(), this.marginMs],
    );
    return rows.length === 1 ? rows[0]!.left_ms : null;
  }

  private async record(dedupeKey: string, status: 'failed' | 'uncertain', error: string): Promise<void> {
    await this.sql(`UPDATE outbound_messages SET status = $2, error = $3 WHERE "dedupeKey" = $1`, [
      dedupeKey,
      status,
      pgText(error).slice(0, 500),
    ]).catch(() => undefined);
  }
}

/** What a message's outbox row needs at reservation. */
export interface Reservation {
  dedupeKey: string;
  platform: string;
  roomId: string;
  body: string;
}

/**
 * CTE `name`: reserves the key (status `sending`) unless a row exists; RETURNING 1 when newly reserved. With
 * `takenBy` (the name of a CTE with the `"claimedBy"` of the claim the caller holds, or no row) the new row
 * is taken for that claim as it is reserved: see {@link takenWithColumns}.
 */
export function reserveCte(p: SqlParams, name: string, r: Reservation, takenBy?: string): string {
  const row = `gen_random_uuid(), ${p.add(r.dedupeKey)}::text, ${p.add(r.platform)}::text, ${p.add(r.roomId)}::text,
            ${p.add(r.body)}::text, 'sending'${takenBy ? `, (SELECT "claimedBy" FROM ${takenBy})` : ''}`;
  return `${name} AS (INSERT INTO outbound_messages (id, "dedupeKey", platform, "roomId", body, status${
    takenBy ? ', "claimedBy"' : ''
  })
    VALUES (${row}) ON CONFLICT ("dedupeKey") DO NOTHING RETURNING 1)`;
}

/**
 * CTE `name`: the claim `claim` as the database holds it now (its `"claimedBy"` and `"claimExpiresAt"`), or no
 * row when it was lost; for {@link reserveCte}'s `takenBy` in a statement after the claim's own.
 */
export function heldClaimCte(p: SqlParams, name: string, claim: WorkClaim): string {
  return `${name} AS (SELECT "claimedBy", "claimExpiresAt" FROM work_items
    WHERE id = ${p.add(claim.id.toString())}::bigint AND "claimedBy" = ${p.add(claim.claimToken)}::text
      AND state = 'running')`;
}

/**
 * The select-list expression of a statement that reserved the reply's row in CTE `reserved` and took it for the
 * claim of CTE `claim` (`reserveCte`'s `takenBy`; that CTE has the claim's `"claimExpiresAt"`): `taken_left_ms`,
 * the ms the claim had left as the database saw it, or null when the row was not taken here (it existed already:
 * a retry, whose post takes it as usual; or the claim was lost). The turn hands it to {@link Outbox.takenAt}.
 */
export function takenWithColumns(reserved: string, claim: string): string {
  return `(SELECT (extract(epoch FROM k."claimExpiresAt" - now()) * 1000)::float8 FROM ${claim} k
             WHERE EXISTS (SELECT 1 FROM ${reserved})) AS taken_left_ms`;
}

/** What a delivered message's row records. */
export interface Delivered {
  dedupeKey: string;
  body: string;
  platformMessageId: string | null;
  /**
   * When the post began, or the platform's own time of a message found in the room: the earliest moment the
   * message can have been on screen. A text answer counts only if sent after its question (so not the
   * moment the platform answered: a slow API shows the question to people well before it answers the bot).
   */
  sentAt: Date;
}

/** What the row of a message the platform accepted records; `shownFrom`: see {@link Delivered.sentAt}. */
export function deliveryRecord(dedupeKey: string, body: string, res: SendResult, shownFrom: Date): Delivered {
  return { dedupeKey, body, platformMessageId: res.platformMessageId ?? null, sentAt: shownFrom };
}

/** CTE `name`: marks a key as delivered (RETURNING 1). */
export function markSentCte(p: SqlParams, name: string, d: Delivered): string {
  const [body, sentAt] = [p.add(pgText(d.body)), p.add(d.sentAt)];
  return `${name} AS (UPDATE outbound_messages SET status = 'sent', body = ${body}, "sentAt" = ${sentAt},
      "platformMessageId" = ${p.add(d.platformMessageId)}, error = NULL
    WHERE "dedupeKey" = ${p.add(d.dedupeKey)} RETURNING 1)`;
}

/** The columns of an outbox row (alias `a`) that {@link priorPost} reads. */
export function priorColumns(a: string): string {
  return `${a}.status AS prior_status, ${a}."claimedBy" AS prior_owner, ${a}."createdAt" AS prior_created,
    ${a}."platformMessageId" AS prior_message`;
}

/** An outbox row as {@link priorColumns} selects it (all null when there is none). */
export interface PriorRow {
  prior_status: string | null;
  prior_owner: string | null;
  prior_created: Date | null;
  prior_message: string | null;
}

/** What an earlier attempt left, or null when there is no row. */
export function priorPost(r: PriorRow): PriorPost | null {
  if (r.prior_status === null) return null;
  return {
    status: r.prior_status,
    claimedBy: r.prior_owner,
    createdAt: new Date(r.prior_created!),
    platformMessageId: r.prior_message,
  };
}

/** Deletes sent and failed messages created before `before` (retention); unsettled ones stay. */
export async function purgeOutbox(db: Db, before: Date): Promise<number> {
  const where = { createdAt: { lt: before }, status: { in: ['sent', 'failed'] } };
  return (await db.outboundMessage.deleteMany({ where })).count;
}
