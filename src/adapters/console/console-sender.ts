import { randomUUID } from 'node:crypto';
import type { ChatSender, ClosedQuestion, OutboundReply, SendResult } from '../../core/chat';

/**
 * The console's outbound half. The pipeline stores every bot message in the conversation history,
 * which is what the console page reads, so "sending" only assigns an id and wakes waiting pollers.
 */
export class ConsoleSender implements ChatSender {
  readonly platform = 'console' as const;
  private listeners: (() => void)[] = [];

  async send(_reply: OutboundReply): Promise<SendResult> {
    this.wake();
    return { platformMessageId: `console-${randomUUID()}` };
  }

  /** The question's history row was closed already (the page reads it): open pages re-read now. */
  async closeQuestion(_q: ClosedQuestion): Promise<void> {
    this.wake();
  }

  private wake(): void {
    const l = this.listeners;
    this.listeners = [];
    // Let the pipeline write the history row first; pollers re-read right after.
    setTimeout(() => l.forEach((fn) => fn()), 20);
  }

  /** Resolves on the next bot message or after `ms`. */
  waitForNext(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      t.unref(); // a page's open poll never keeps a stopping process alive
      this.listeners.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}
