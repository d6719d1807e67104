import { randomUUID } from 'node:crypto';
import type { ChatSender, OutboundReply, SendResult } from '../types';

/**
 * The console's outbound half. The pipeline stores every bot message in the conversation history,
 * which is what the console page reads, so "sending" only assigns an id and wakes waiting pollers.
 */
export class ConsoleSender implements ChatSender {
  readonly platform = 'console' as const;
  private listeners: (() => void)[] = [];

  async send(_reply: OutboundReply): Promise<SendResult> {
    const l = this.listeners;
    this.listeners = [];
    // Let the pipeline write the history row first; pollers re-read right after.
    setTimeout(() => l.forEach((fn) => fn()), 20);
    return { platformMessageId: `console-${randomUUID()}` };
  }

  /** Resolves on the next bot message or after `ms`. */
  waitForNext(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.listeners.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}
