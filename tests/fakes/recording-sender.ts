import type { ChatSender, OutboundReply, Platform, SendResult } from '../../src/core/chat';

/** A platform sender that records what it was asked to post (the platform itself is outside the machine). */
export class RecordingSender implements ChatSender {
  readonly sent: OutboundReply[] = [];

  constructor(readonly platform: Platform = 'console') {}

  async send(reply: OutboundReply): Promise<SendResult> {
    this.sent.push(reply);
    return { platformMessageId: `sent-${this.sent.length}` };
  }

  /** The texts posted, in order. */
  get texts(): string[] {
    return this.sent.map((r) => r.text);
  }
}
