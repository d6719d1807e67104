import type { Summarizer } from '../brain/summarize';
import { quoted } from '../context/quote';
import { AppError } from '../core/app-error';
import type { ClaimedItem, WorkOutcome } from '../queue/work-queue';
import type { Logger } from '../observability/logger';
import { safeRedactText } from '../observability/redact';
import { llmUsageCte, type TurnRecorder } from '../turn/turn-recorder';
import type { ConversationRef } from '../context/conversation-log';
import {
  RECENT_MESSAGES,
  type ConversationSummaries,
  type SummaryPayload,
  type SummarySourceMessage,
} from '../context/conversation-summaries';

/** Most messages folded into a summary by one item (a longer backlog is folded by the next items). */
const MAX_MESSAGES_PER_SUMMARY = 200;

export interface SummaryRunnerOptions {
  summaries: ConversationSummaries;
  summarizer: Pick<Summarizer, 'summarize'>;
  /** The writer of llm_usage (a call whose answer is unusable still cost). */
  recorder: Pick<TurnRecorder, 'recordUsage'>;
  logger: Logger;
  timezone: string;
  /** The summary is rewritten once this many messages beyond the recent window are not in it. */
  every: number;
}

/** True for the payload of a conversation-summary `work` item. */
export function isSummaryItem(payload: unknown): payload is SummaryPayload {
  return (payload as { kind?: unknown } | null)?.kind === 'conversation_summary';
}

/**
 * The `work` item that writes a conversation's summary (R-X4): the previous summary and the messages since,
 * except the recent window the context shows anyway, go to the model redacted and quoted as data; the new
 * summary is redacted again and stored with the call's usage and the item's completion in one statement.
 * A failing call throws: the work queue retries it (backoff, `maxAttempts`); replies never wait for it.
 */
export class SummaryRunner {
  constructor(private readonly o: SummaryRunnerOptions) {}

  async handle(item: ClaimedItem): Promise<WorkOutcome> {
    const p = item.payload as SummaryPayload;
    const conv: ConversationRef = { orgId: p.orgId, platform: p.platform, roomId: p.roomId, accountId: p.accountId };
    const state = await this.o.summaries.load(conv, MAX_MESSAGES_PER_SUMMARY + RECENT_MESSAGES);
    const older = state.since.slice(0, Math.max(0, state.since.length - RECENT_MESSAGES));
    // Fewer than a batch beyond the window (a summary written meanwhile): nothing to do.
    if (older.length < Math.min(this.o.every, MAX_MESSAGES_PER_SUMMARY)) return { completed: false };
    const batch = older.slice(0, MAX_MESSAGES_PER_SUMMARY);
    const previous = state.summary ? redacted(state.summary) : null;
    const result = await this.o.summarizer.summarize({
      previous: previous ? quoted(previous, 2000) : null,
      lines: batch.map((m) => this.line(m)),
    });
    if (result.kind === 'unusable') {
      // The call cost money: record it, then let the queue try again.
      await this.o.recorder.recordUsage(p.orgId, [result.call]);
      throw new AppError('LLM_INVALID_OUTPUT', 'conversation summary: the model gave no usable summary');
    }
    const stored = await this.o.summaries.store(
      conv,
      { text: redacted(result.text), coversUpToId: batch.at(-1)!.id, previousCoversUpToId: state.coversUpToId },
      item,
      (q) => llmUsageCte(q, p.orgId, [result.call]),
    );
    this.o.logger.info(
      { workItemId: String(item.id), messages: batch.length, stored },
      stored ? 'conversation summary written' : 'conversation summary not stored (claim lost or already refreshed)',
    );
    return { completed: true };
  }

  /** 「[11/20 10:03] 本人: 「…」」: one redacted, quoted message. */
  private line(m: SummarySourceMessage): string {
    const at = new Intl.DateTimeFormat('ja-JP', {
      timeZone: this.o.timezone,
      month: 'numeric',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hour12: false,
    }).format(m.sentAt);
    return `[${at}] ${m.role === 'assistant' ? '秘書' : '本人'}: ${quoted(redacted(m.text), 600)}`;
  }
}

/** Redacted text; never the raw text when redaction fails. */
function redacted(text: string): string {
  return safeRedactText(text) ?? '';
}
