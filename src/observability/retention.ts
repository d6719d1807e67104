import type { Db } from '../db/prisma';

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
  workItems: number;
  outboundMessages: number;
  /** Pending actions left undecided for a day: settled now (their raw texts replaced by the redacted copies). */
  pendingSettled: number;
  pendingActions: number;
}

const DAY_MS = 86_400_000;
const UNDECIDED = ['pending', 'approved'];

/**
 * Settles pending actions nobody decided: still pending a day after their expiry → expired; approved but
 * never run for a day → failed. Either way the database trigger replaces their raw texts with the
 * redacted copies, so no undecided action keeps raw text for long.
 */
async function settleStalePending(db: Db, now: Date): Promise<number> {
  const dayAgo = new Date(now.getTime() - DAY_MS);
  const [expired, abandoned] = await Promise.all([
    db.pendingAction.updateMany({
      where: { status: 'pending', expiresAt: { lt: dayAgo } },
      data: { status: 'expired', decidedAt: now },
    }),
    db.pendingAction.updateMany({
      where: { status: 'approved', decidedAt: { lt: dayAgo } },
      data: { status: 'failed', executedAt: now, result: { error: 'abandoned after approval' } },
    }),
  ]);
  return expired.count + abandoned.count;
}

/** Deletes audit and conversation data past its retention (R-O2). Unfinished work is never deleted. */
export async function purgeExpired(db: Db, policy: RetentionPolicy, now: Date = new Date()): Promise<RetentionResult> {
  const auditBefore = new Date(now.getTime() - policy.auditDays * DAY_MS);
  const historyBefore = new Date(now.getTime() - policy.historyDays * DAY_MS);
  const pendingSettled = await settleStalePending(db, now);
  const deleted = await Promise.all([
    db.turnRecord.deleteMany({ where: { createdAt: { lt: auditBefore } } }),
    db.llmUsage.deleteMany({ where: { createdAt: { lt: auditBefore } } }),
    db.conversationMessage.deleteMany({ where: { createdAt: { lt: historyBefore } } }),
    db.workItem.deleteMany({ where: { state: { in: ['done', 'failed'] }, updatedAt: { lt: historyBefore } } }),
    db.outboundMessage.deleteMany({ where: { createdAt: { lt: historyBefore }, status: { in: ['sent', 'failed'] } } }),
    db.pendingAction.deleteMany({ where: { createdAt: { lt: historyBefore }, status: { notIn: UNDECIDED } } }),
  ]);
  const [turnRecords, llmUsage, conversationMessages, workItems, outboundMessages, pendingActions] =
    deleted.map((d) => d.count);
  return {
    turnRecords: turnRecords!, llmUsage: llmUsage!, conversationMessages: conversationMessages!, workItems: workItems!,
    outboundMessages: outboundMessages!, pendingSettled, pendingActions: pendingActions!,
  };
}
