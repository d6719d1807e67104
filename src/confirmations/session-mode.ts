import type { SessionMode } from './types';

/** What a stored session row says about its mode (conversation_states). */
export interface StoredSession {
  mode: string;
  pendingActionId: string | null;
  expiresAt: Date;
}

/**
 * True when a stored session holds nothing that can expire or be answered (it has not expired, points at
 * no pending action and is not waiting for a confirmation): a turn may use it as it is, without the
 * Sessions's housekeeping. No session at all is plain too.
 */
export function isPlainSession(s: StoredSession | null, now: Date): boolean {
  if (s === null) return true;
  const expired = s.expiresAt.getTime() < now.getTime();
  return !expired && s.pendingActionId === null && s.mode !== 'CONFIRMATION_PENDING';
}

/**
 * The mode a turn sees: CONFIRMATION_PENDING exactly while a live pending action exists (a stored
 * CONFIRMATION_PENDING without one reads as NORMAL); otherwise the stored mode.
 */
export function effectiveMode(stored: string | null | undefined, hasLivePending: boolean): SessionMode {
  if (hasLivePending) return 'CONFIRMATION_PENDING';
  const mode = (stored ?? 'NORMAL') as SessionMode;
  return mode === 'CONFIRMATION_PENDING' ? 'NORMAL' : mode;
}
