import type { ChatSender, OutboundReply, Platform, SendResult } from '../adapters/types';
import type { Db } from '../db/prisma';
import { AppError } from '../errors/app-error';

/**
 * Sends bot messages through the adapters, keyed so a retried turn never posts twice: the row is
 * written before sending and marked sent after. A row already `sent` makes a later send a no-op.
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

  /** True when a message with this key was already delivered. */
  async alreadySent(dedupeKey: string): Promise<boolean> {
    const row = await this.db.outboundMessage.findUnique({ where: { dedupeKey }, select: { status: true } });
    return row?.status === 'sent';
  }

  async send(dedupeKey: string, reply: OutboundReply): Promise<SendResult & { skipped: boolean }> {
    const sender = this.senders.get(reply.platform);
    if (!sender) throw new AppError('EXTERNAL_API_FAILED', `no sender for platform ${reply.platform}`);
    return this.once(dedupeKey, { platform: reply.platform, roomId: reply.roomId, body: reply.text }, () => sender.send(reply));
  }

  /** Runs a posting function at most once per key (e.g. a handler's announcement), recording the outcome. */
  async once(dedupeKey: string, meta: { platform: string; roomId: string; body: string }, post: () => Promise<SendResult>): Promise<SendResult & { skipped: boolean }> {
    const existing = await this.db.outboundMessage.findUnique({ where: { dedupeKey } });
    if (existing?.status === 'sent') return { skipped: true, platformMessageId: existing.platformMessageId ?? undefined };
    if (!existing) {
      await this.db.outboundMessage.createMany({
        data: [{ dedupeKey, platform: meta.platform, roomId: meta.roomId, body: meta.body, status: 'sending' }],
        skipDuplicates: true,
      });
    }
    try {
      const res = await post();
      await this.db.outboundMessage.update({ where: { dedupeKey }, data: { status: 'sent', sentAt: new Date(), platformMessageId: res.platformMessageId ?? null, error: null } });
      return { ...res, skipped: false };
    } catch (err) {
      const name = err instanceof AppError ? `${err.code}: ${err.message}` : err instanceof Error ? err.name : 'error';
      await this.db.outboundMessage.update({ where: { dedupeKey }, data: { status: 'failed', error: name.slice(0, 500) } }).catch(() => undefined);
      throw err instanceof AppError ? err : new AppError('EXTERNAL_API_FAILED', `send failed on ${meta.platform}`, { cause: err });
    }
  }
}
