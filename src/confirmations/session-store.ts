/**
 * The conversation_states table (R-S1): its only writer, and the one way a session is read. Every state change
 * here is one conditional statement, so concurrent callers cannot both win. The pending action a session points
 * at is written by `./pending-actions` (which calls the functions here for the session's side; opening one sets
 * the session's pointer inside the database function `open_pending_action`, decision record 0005).
 */
import type { ConversationState } from '../generated/prisma/client';
import type { Db, Prisma } from '../db/prisma';
import { toPendingView, type PendingRow } from './pending-rows';
import type { SessionKey } from './session-key';
import { effectiveMode, isPlainSession } from './session-mode';
import type { PendingActionView, SessionView } from './types';

/** The client or an interactive transaction. */
export type Client = Db | Prisma.TransactionClient;

/** A conversation_states row, as a session is read (its key aside). */
export type StoredSession = Omit<ConversationState, 'platform' | 'roomId' | 'accountId' | 'updatedAt'>;

/**
 * A session as read from the database: its row (null: none stored), the pending action the row points at (null:
 * none or gone) and, when read with it, when that action's current question was delivered (null: not yet;
 * undefined: not read).
 */
export interface SessionRows {
  state: StoredSession | null;
  pending: PendingRow | null;
  questionShownAt?: Date | null;
}

const where = (key: SessionKey) => ({ platform_roomId_accountId: key });

/** The advisory-lock name of a session (hashed by the database), the same for every writer. */
export function sessionLockName(key: SessionKey): string {
  return `hisho:session:${JSON.stringify([key.platform, key.roomId, key.accountId])}`;
}

/** Serialises writers of one session inside a transaction (cancelling; `open_pending_action` takes the same lock). */
export async function lockSession(tx: Prisma.TransactionClient, key: SessionKey): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${sessionLockName(key)}::text))`;
}

/** The session's row and the pending action it points at (two reads; a turn's first statement reads both at once). */
export async function readSession(c: Client, key: SessionKey): Promise<SessionRows> {
  const state = await c.conversationState.findUnique({ where: where(key) });
  const pending = state?.pendingActionId
    ? await c.pendingAction.findUnique({ where: { id: state.pendingActionId } })
    : null;
  return { state, pending };
}

/** The session row alone. */
export function readSessionRow(c: Client, key: SessionKey): Promise<StoredSession | null> {
  return c.conversationState.findUnique({ where: where(key) });
}

/**
 * The session as a turn sees it, when nothing in it can have expired: a live session pointing at a pending action
 * still within its time, or a plainly NORMAL one. Null when expiry housekeeping must look first.
 */
export function liveSessionView(key: SessionKey, rows: SessionRows, now: Date): SessionView | null {
  const { state, pending: row } = rows;
  const live =
    state !== null &&
    state.expiresAt.getTime() >= now.getTime() &&
    row !== null &&
    row.status === 'pending' &&
    row.expiresAt.getTime() > now.getTime();
  if (live) {
    const pending = toPendingView(row);
    if (rows.questionShownAt !== undefined) pending.questionShownAt = rows.questionShownAt;
    return sessionView(key, state, pending, null);
  }
  return isPlainSession(state, now) ? sessionView(key, state, null, null) : null;
}

/** The plain view of a session row with its live pending action (if any) and the one that just expired. */
export function sessionView(
  key: SessionKey,
  state: StoredSession | null,
  pending: PendingActionView | null,
  expiredPending: PendingActionView | null,
): SessionView {
  return {
    key,
    mode: effectiveMode(state?.mode, pending !== null),
    pending,
    expiredPending,
    clarificationRounds: state?.clarificationRounds ?? 0,
    errorCount: state?.errorCount ?? 0,
    lastIntent: state?.lastIntent ?? null,
    lastTool: state?.lastTool ?? null,
    lastError: state?.lastError ?? null,
    expiresAt: state?.expiresAt ?? null,
  };
}

/** What an expired session starts afresh with. */
const FRESH = {
  mode: 'NORMAL',
  pendingActionId: null,
  clarificationRounds: 0,
  errorCount: 0,
  lastError: null,
  lastIntent: null,
  lastTool: null,
} as const;

/** An expired session (expiresAt < now) starts afresh: NORMAL, nothing pending, counters cleared. Rows changed. */
export async function resetExpiredSession(c: Client, key: SessionKey, now: Date, expiresAt: Date): Promise<number> {
  const n = await c.conversationState.updateMany({
    where: { ...key, expiresAt: { lt: now } },
    data: { ...FRESH, expiresAt },
  });
  return n.count;
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

/** Creates the session row if missing and extends its expiry (a write means activity). */
export async function touchSession(
  c: Client,
  key: SessionKey,
  expiresAt: Date,
  update: Prisma.ConversationStateUpdateInput = {},
  create: Partial<Prisma.ConversationStateCreateInput> = {},
): Promise<ConversationState> {
  return c.conversationState.upsert({
    where: where(key),
    create: { ...key, ...create, expiresAt },
    update: { ...update, expiresAt },
  });
}

/** The session enters ERROR_RECOVERY unless it awaits a confirmation. */
export async function enterErrorRecovery(c: Client, key: SessionKey): Promise<void> {
  await c.conversationState.updateMany({
    where: { ...key, mode: { not: 'CONFIRMATION_PENDING' } },
    data: { mode: 'ERROR_RECOVERY' },
  });
}

/** ERROR_RECOVERY (or a CONFIRMATION_PENDING pointing at nothing) → NORMAL. */
export async function leaveErrorRecovery(c: Client, key: SessionKey): Promise<void> {
  await c.conversationState.updateMany({
    where: { ...key, OR: [{ mode: 'ERROR_RECOVERY' }, { mode: 'CONFIRMATION_PENDING', pendingActionId: null }] },
    data: { mode: 'NORMAL' },
  });
}
