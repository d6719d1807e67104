import type { InboundMessage } from '../core/chat';
import type { WorkQueue } from '../queue/work-queue';

/** Keys that identify a conversation and a message in the queue. */
export function conversationKey(m: Pick<InboundMessage, 'platform' | 'roomId' | 'senderAccountId'>): string {
  return `${roomOrderingPrefix(m.platform, m.roomId)}${m.senderAccountId}`;
}

/** The start of the ordering key of every conversation in a room (the console asks whether a turn runs there). */
export function roomOrderingPrefix(platform: string, roomId: string): string {
  return `${platform}:${roomId}:`;
}

export function messageDedupeKey(m: Pick<InboundMessage, 'platform' | 'roomId' | 'platformMessageId'>): string {
  return `msg:${m.platform}:${m.roomId}:${m.platformMessageId}`;
}

/**
 * Intake: the durable hand-off between an adapter and the brain. `accept` returns only after the
 * message is stored, so an adapter may acknowledge the platform right after (R-A2: accepted = not lost).
 */
export class Intake {
  /** Messages being stored now (their platform waits for the acknowledgement). */
  private storing = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly queue: WorkQueue,
    private readonly onAccepted: () => void = () => undefined,
  ) {}

  async accept(msg: InboundMessage): Promise<{ status: 'accepted' | 'duplicate' }> {
    const orderingKey = conversationKey(msg);
    this.storing++;
    let res;
    try {
      res = await this.queue.enqueueGrouped({
        type: 'user_request',
        payload: msg,
        orderingKey,
        dedupeKey: messageDedupeKey(msg),
      });
    } finally {
      if (--this.storing === 0) this.idleWaiters.splice(0).forEach((w) => w());
    }
    if (res.duplicate) return { status: 'duplicate' };
    this.onAccepted();
    return { status: 'accepted' };
  }

  /**
   * Whether messages are being stored now. The worker pool starts no new turn meanwhile (it `holdWhile`s this):
   * in one process the intake and the turns share one event loop and one database pool, and a burst's
   * acknowledgements would wait behind turns (decision 0002).
   */
  get busy(): boolean {
    return this.storing > 0;
  }

  /** Resolves once no message is being stored. */
  whenIdle(): Promise<void> {
    if (this.storing === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }
}
