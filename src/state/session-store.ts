/**
 * Low-level statements on conversation_states / pending_actions shared by the BrainStateManager
 * (internal to src/state). Every state change here is one conditional statement, so concurrent
 * callers cannot both win.
 */
import type { ConversationState } from '../generated/prisma/client';
import type { Db, Prisma } from '../db/prisma';
import { toPendingView, type PendingRow } from './pending-rows';
import type { SessionKey } from './session-key';
import { isPlainSession } from './session-mode';
import type { PendingActionView } from './types';

/** The client or an interactive transaction. */
export type Client = Db | Prisma.TransactionClient;

/** Result of `sweepSession`. */
export interface Sweep {
  /** The session row after housekeeping (null: none stored). */
  state: ConversationState | null;
  /** The pending action that expired in this sweep (the session's current one first), if any. */
  expired: PendingActionView | null;
}

const where = (key: SessionKey) => ({ platform_roomId_accountId: key });

/** The advisory-lock name of a session (hashed by the database), the same for every writer. */
export function sessionLockName(key: SessionKey): string {
  return `hisho:session:${JSON.stringify([key.platform, key.roomId, key.accountId])}`;
}

/**
 * Serialises writers of one session inside a transaction (cancelPending…; createPending takes the same lock
 * inside the database function open_pending_action).
 */
export async function lockSession(tx: Prisma.TransactionClient, key: SessionKey): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${sessionLockName(key)}::text))`;
}

/**
 * Expiry housekeeping: an expired session (expiresAt < now) resets to a fresh NORMAL session and its
 * pending actions expire; pending actions past their own expiresAt expire. Idempotent; only one of
 * several concurrent sweeps reports a given expired action.
 */
export async function sweepSession(c: Client, key: SessionKey, now: Date, sessionTtlMs: number): Promise<Sweep> {
  const before = await c.conversationState.findUnique({ where: where(key) });
  const sessionExpired = before !== null && before.expiresAt.getTime() < now.getTime();
  // Fast path (most turns): no session, or a live one pointing at no pending action — nothing can expire.
  if (before === null || isPlainSession(before, now)) {
    return { state: before, expired: null };
  }
  const expired = await c.$queryRaw<PendingRow[]>`
    UPDATE pending_actions SET status = 'expired', "decidedAt" = ${now}
    WHERE platform = ${key.platform} AND "roomId" = ${key.roomId} AND "accountId" = ${key.accountId}
      AND status = 'pending' AND ("expiresAt" <= ${now} OR ${sessionExpired}::boolean)
    RETURNING *`;
  let changed = false;
  if (sessionExpired) {
    const n = await c.conversationState.updateMany({
      where: { ...key, expiresAt: { lt: now } },
      data: {
        mode: 'NORMAL',
        pendingActionId: null,
        clarificationRounds: 0,
        errorCount: 0,
        lastError: null,
        lastIntent: null,
        lastTool: null,
        expiresAt: new Date(now.getTime() + sessionTtlMs),
      },
    });
    changed = n.count > 0;
  } else if (before?.pendingActionId && expired.some((r) => r.id === before.pendingActionId)) {
    changed = (await clearSessionPending(c, key, before.pendingActionId)) > 0;
  }
  const state = changed ? await c.conversationState.findUnique({ where: where(key) }) : before;
  const newestFirst = [...expired].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  const report = newestFirst.find((r) => r.id === before?.pendingActionId) ?? newestFirst[0];
  return { state, expired: report ? toPendingView(report) : null };
}

/** Session back to NORMAL if (and only if) it still points at `pendingId`. Returns rows changed. */
export async function clearSessionPending(
  c: Client,
  key: SessionKey,
  pendingId: string,
  lastError?: string,
): Promise<number> {
  const n = await c.conversationState.updateMany({
    where: { ...key, pendingActionId: pendingId },
    data: { mode: 'NORMAL', pendingActionId: null, ...(lastError !== undefined ? { lastError } : {}) },
  });
  return n.count;
}

/** pending → expired for one action whose expiry has passed; null if it was not pending any more. */
export async function expireOne(c: Client, pendingId: string, now: Date): Promise<PendingRow | null> {
  const rows = await c.$queryRaw<PendingRow[]>`
    UPDATE pending_actions SET status = 'expired', "decidedAt" = ${now}
    WHERE id = ${pendingId} AND status = 'pending' AND "expiresAt" <= ${now}
    RETURNING *`;
  const row = rows[0];
  if (!row) return null;
  await clearSessionPending(c, { platform: row.platform, roomId: row.roomId, accountId: row.accountId }, row.id);
  return row;
}

/** Creates the session row if missing and extends its expiry (a write means activity). */
export async function touchSession(
  c: Client,
  key: SessionKey,
  now: Date,
  sessionTtlMs: number,
  update: Prisma.ConversationStateUpdateInput = {},
  create: Partial<Prisma.ConversationStateCreateInput> = {},
): Promise<ConversationState> {
  const expiresAt = new Date(now.getTime() + sessionTtlMs);
  return c.conversationState.upsert({
    where: where(key),
    create: { ...key, ...create, expiresAt },
    update: { ...update, expiresAt },
  });
}
