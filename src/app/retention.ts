import type { Db } from '../db/prisma';
import { purgeFinishedWork } from '../queue/work-queue';
import { purgeOutbox } from '../queue/outbox';
import { purgeDecidedPending, settleStalePending } from '../confirmations/pending-actions';
import { purgeConversations } from '../context/conversation-log';
import { purgeExpiredSummaries } from '../context/conversation-summaries';
import { purgeTurns } from '../turn/turn-recorder';

export interface RetentionPolicy {
  /** Turn records and LLM usage rows older than this are deleted. */
  auditDays: number;
  /** Conversation history, finished work items, sent messages and decided pending actions older than this go. */
  historyDays: number;
}

export interface RetentionResult {
  turnRecords: number;
  llmUsage: number;
  conversationMessages: number;
  /** Conversation summaries that covered a purged message (or were not refreshed within the period). */
  conversationSummaries: number;
  workItems: number;
  outboundMessages: number;
  /** Pending actions left undecided for a day: settled now (their raw texts replaced by the redacted copies). */
  pendingSettled: number;
  pendingActions: number;
}

const DAY_MS = 86_400_000;

/**
 * Deletes audit and conversation data past its retention (R-O2), each table through its owner. Unfinished
 * work is never deleted; pending actions nobody decided are settled first (their raw texts replaced).
 */
export async function purgeExpired(db: Db, policy: RetentionPolicy, now: Date = new Date()): Promise<RetentionResult> {
  const auditBefore = new Date(now.getTime() - policy.auditDays * DAY_MS);
  const historyBefore = new Date(now.getTime() - policy.historyDays * DAY_MS);
  const pendingSettled = await settleStalePending(db, now);
  // Summaries first: they are found through the messages they cover, which go next.
  const conversationSummaries = await purgeExpiredSummaries(db, historyBefore);
  const [turns, conversationMessages, workItems, outboundMessages, pendingActions] = await Promise.all([
    purgeTurns(db, auditBefore),
    purgeConversations(db, historyBefore),
    purgeFinishedWork(db, historyBefore),
    purgeOutbox(db, historyBefore),
    purgeDecidedPending(db, historyBefore),
  ]);
  return {
    ...turns,
    conversationMessages,
    conversationSummaries,
    workItems,
    outboundMessages,
    pendingSettled,
    pendingActions,
  };
}
