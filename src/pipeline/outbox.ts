import type { Pool } from 'pg';
import type { ChatSender, FoundMessage, OutboundReply, Platform, SendResult } from '../adapters/types';
import type { Db } from '../db/prisma';
import { sqlRunner, type Sql } from '../db/sql';
import { AppError } from '../errors/app-error';
import { claimLostError, type ClaimedItem } from '../intake/work-queue';

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

/** Options of the {@link Outbox}. */
export interface OutboxOptions {
  /** A claim must have at least this long to run before its worker may post (default 10 s). */
  claimMarginMs?: number;
  /** Wait before looking for a message whose post timed out (default 2 s: ChatWork may still be writing it). */
  reconcileDelayMs?: number;
  /** The pool under the Prisma client, for the claim check on the hot path. */
  pool?: Pool;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Sends bot messages through the adapters, at most once per key (issue 7 point 5):
 * - a row is reserved before sending and marked `sent` after; a key already `sent` is never posted again;
 * - the row is taken by the worker that holds the work item's claim, in one statement that also checks the
 *   claim still has time to run, so a worker that lost its claim (missed heartbeat) posts nothing;
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

  constructor(private readonly db: Db, opts: OutboxOptions = {}) {
    this.sql = sqlRunner(db, opts.pool);
    this.marginMs = opts.claimMarginMs ?? 10_000;
    this.reconcileDelayMs = opts.reconcileDelayMs ?? 2_000;
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  register(sender: ChatSender): void {
    this.senders.set(sender.platform, sender);
  }

  hasSender(platform: Platform): boolean {
    return this.senders.has(platform);
  }

  /** Reserves a key. Returns null when newly reserved, otherwise what an earlier attempt left. */
  async reserve(
    dedupeKey: string, meta: { platform: string; roomId: string; body?: string },
  ): Promise<PriorPost | null> {
    const inserted = await this.db.outboundMessage.createMany({
      data: [{ dedupeKey, platform: meta.platform, roomId: meta.roomId, body: meta.body ?? '', status: 'sending' }],
      skipDuplicates: true,
    });
    if (inserted.count === 1) return null;
    return this.db.outboundMessage.findUnique({
      where: { dedupeKey }, select: { status: true, claimedBy: true, createdAt: true, platformMessageId: true },
    });
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
    if (found) await this.markSent(dedupeKey, found.text ?? reply.text, found);
    return found;
  }

  /**
   * Posts a reserved key under the work item's claim and marks it sent. A post that may have landed is
   * looked for once after a short wait; if it is not found the error says so (`uncertain`) and the row
   * stays `uncertain`, for the next attempt to reconcile.
   */
  async deliver(dedupeKey: string, reply: OutboundReply, claim?: WorkClaim): Promise<SendResult> {
    const sender = this.senders.get(reply.platform);
    if (!sender) throw new AppError('EXTERNAL_API_FAILED', `no sender for platform ${reply.platform}`);
    await this.take(dedupeKey, claim);
    const marked = { ...reply, idempotencyKey: dedupeKey };
    let res: SendResult;
    try {
      res = await sender.send(marked);
    } catch (err) {
      const app = err instanceof AppError
        ? err : new AppError('EXTERNAL_API_FAILED', `send failed on ${reply.platform}`, { cause: err });
      await this.record(dedupeKey, app.uncertain ? 'uncertain' : 'failed', `${app.code}: ${app.message}`);
      if (!app.uncertain) throw app;
      await this.sleep(this.reconcileDelayMs);
      const found = await this.reconcile(dedupeKey, marked, new Date(Date.now() - 60_000)).catch(() => null);
      if (found) return found;
      throw app;
    }
    await this.markSent(dedupeKey, reply.text, res);
    return res;
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
  private markSent(dedupeKey: string, body: string, res: SendResult): Promise<unknown> {
    return this.sql(
      `UPDATE outbound_messages SET status = 'sent', body = $2, "sentAt" = $3, "platformMessageId" = $4, error = NULL
       WHERE "dedupeKey" = $1`,
      [dedupeKey, body.replace(/\u0000/g, ''), new Date(), res.platformMessageId ?? null]);
  }

  /**
   * Takes the row for the worker holding `claim`, if that claim is still valid for at least the margin.
   * Throws (nothing posted) when the worker lost its claim.
   */
  private async take(dedupeKey: string, claim?: WorkClaim): Promise<void> {
    if (!claim) return;
    if (claim.claimLost) throw claimLostError();
    const rows = await this.sql(
      `UPDATE outbound_messages SET "claimedBy" = $2
       WHERE "dedupeKey" = $1 AND status <> 'sent'
         AND EXISTS (SELECT 1 FROM work_items w WHERE w.id = $3::bigint AND w."claimedBy" = $2 AND w.state = 'running'
                     AND w."claimExpiresAt" > now() + ($4::int * interval '1 millisecond'))
       RETURNING 1`,
      [dedupeKey, claim.claimToken, claim.id.toString(), this.marginMs]);
    if (rows.length !== 1) throw claimLostError();
  }

  private async record(dedupeKey: string, status: 'failed' | 'uncertain', error: string): Promise<void> {
    await this.db.outboundMessage.update({ where: { dedupeKey }, data: { status, error: error.slice(0, 500) } })
      .catch(() => undefined);
  }
}
