import type { ChatSender, OutboundReply, Platform, SendResult } from '../adapters/types';
import type { Db } from '../db/prisma';
import { AppError } from '../errors/app-error';

/**
 * Sends bot messages through the adapters, keyed so a retried turn never posts twice: a row is reserved
 * before sending and marked sent after. A key already `sent` makes a later send a no-op.
 */
export class Outbox {
  private readonly senders = new Map<Platform, ChatSender>();

  constructor(private readonly db: Db) {}

  register(sender: ChatSender): void {
    this.senders.set(sender.platform, sender);
  }

  hasSender(platform: Platform): boolean {
    return this.senders.has(platform);
  }

  /**
   * Reserves a key (one round trip in the common case). Returns `sent` when a message with this key was
   * already delivered (a retried turn), otherwise `reserved`.
   */
  async reserve(dedupeKey: string, meta: { platform: string; roomId: string; body?: string }): Promise<{ status: 'reserved' } | { status: 'sent'; platformMessageId?: string }> {
    const inserted = await this.db.outboundMessage.createMany({
      data: [{ dedupeKey, platform: meta.platform, roomId: meta.roomId, body: meta.body ?? '', status: 'sending' }],
      skipDuplicates: true,
    });
    if (inserted.count === 1) return { status: 'reserved' };
    const existing = await this.db.outboundMessage.findUnique({ where: { dedupeKey }, select: { status: true, platformMessageId: true } });
    return existing?.status === 'sent' ? { status: 'sent', platformMessageId: existing.platformMessageId ?? undefined } : { status: 'reserved' };
  }

  /** Posts through the platform's adapter (the key must be reserved); failures are recorded on the row. */
  async deliver(dedupeKey: string, reply: OutboundReply): Promise<SendResult> {
    const sender = this.senders.get(reply.platform);
    if (!sender) throw new AppError('EXTERNAL_API_FAILED', `no sender for platform ${reply.platform}`);
    return this.post(dedupeKey, reply.platform, () => sender.send(reply));
  }

  /** Marks a reserved key as delivered (callers may batch this with their other writes). */
  markSent(dedupeKey: string, body: string, res: SendResult): Promise<unknown> {
    return this.db.outboundMessage.update({ where: { dedupeKey }, data: { status: 'sent', body, sentAt: new Date(), platformMessageId: res.platformMessageId ?? null, error: null }, select: { id: true } });
  }

  /** Reserve → deliver → mark sent, at most once per key. */
  async send(dedupeKey: string, reply: OutboundReply): Promise<SendResult & { skipped: boolean }> {
    const sender = this.senders.get(reply.platform);
    if (!sender) throw new AppError('EXTERNAL_API_FAILED', `no sender for platform ${reply.platform}`);
    return this.once(dedupeKey, { platform: reply.platform, roomId: reply.roomId, body: reply.text }, () => sender.send(reply));
  }

  /** Runs a posting function at most once per key (e.g. a handler's announcement), recording the outcome. */
  async once(dedupeKey: string, meta: { platform: string; roomId: string; body: string }, post: () => Promise<SendResult>): Promise<SendResult & { skipped: boolean }> {
    const r = await this.reserve(dedupeKey, meta);
    if (r.status === 'sent') return { skipped: true, platformMessageId: r.platformMessageId };
    const res = await this.post(dedupeKey, meta.platform, post);
    await this.markSent(dedupeKey, meta.body, res);
    return { ...res, skipped: false };
  }

  private async post(dedupeKey: string, platform: string, fn: () => Promise<SendResult>): Promise<SendResult> {
    try {
      return await fn();
    } catch (err) {
      const name = err instanceof AppError ? `${err.code}: ${err.message}` : err instanceof Error ? err.name : 'error';
      await this.db.outboundMessage.update({ where: { dedupeKey }, data: { status: 'failed', error: name.slice(0, 500) } }).catch(() => undefined);
      throw err instanceof AppError ? err : new AppError('EXTERNAL_API_FAILED', `send failed on ${platform}`, { cause: err });
    }
  }
}
