import type { Db } from '../db/prisma';

export interface RetentionPolicy {
  /** Turn records and LLM usage rows older than this are deleted. */
  auditDays: number;
  /** Conversation history, finished work items and sent-message rows older than this are deleted. */
  historyDays: number;
}

export interface RetentionResult {
  turnRecords: number;
  llmUsage: number;
  conversationMessages: number;
  workItems: number;
  outboundMessages: number;
}

const DAY_MS = 86_400_000;

/** Deletes audit and conversation data past its retention (R-O2). Unfinished work is never deleted. */
export async function purgeExpired(db: Db, policy: RetentionPolicy, now: Date = new Date()): Promise<RetentionResult> {
  const auditBefore = new Date(now.getTime() - policy.auditDays * DAY_MS);
  const historyBefore = new Date(now.getTime() - policy.historyDays * DAY_MS);
  const [turnRecords, llmUsage, conversationMessages, workItems, outboundMessages] = await Promise.all([
    db.turnRecord.deleteMany({ where: { createdAt: { lt: auditBefore } } }),
    db.llmUsage.deleteMany({ where: { createdAt: { lt: auditBefore } } }),
    db.conversationMessage.deleteMany({ where: { createdAt: { lt: historyBefore } } }),
    db.workItem.deleteMany({ where: { state: { in: ['done', 'failed'] }, updatedAt: { lt: historyBefore } } }),
    db.outboundMessage.deleteMany({ where: { createdAt: { lt: historyBefore }, status: { in: ['sent', 'failed'] } } }),
  ]);
  return {
    turnRecords: turnRecords.count, llmUsage: llmUsage.count, conversationMessages: conversationMessages.count,
    workItems: workItems.count, outboundMessages: outboundMessages.count,
  };
}
