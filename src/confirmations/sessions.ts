/**
 * Sessions (R-S1, R-S5, seed 003 §5.1.5–5.1.7): the session of a (platform, room, account) as a turn sees it,
 * with its pending confirmation, and its counters (clarification rounds, consecutive errors). Its pending action's
 * life is `./pending-actions`; the table's statements are `./session-store`. Database errors propagate (callers
 * fail closed).
 */
import type { Db, Prisma } from '../db/prisma';
import { pgText } from '../db/sql';
import { PendingActions, type PendingActionsOptions } from './pending-actions';
import { toPendingView } from './pending-rows';
import type { SessionKey } from './session-key';
import {
  enterErrorRecovery,
  leaveErrorRecovery,
  liveSessionView,
  readSession,
  sessionView,
  touchSession,
  type SessionRows,
  type StoredSession,
} from './session-store';
import type { PendingActionView, SessionMode, SessionView } from './types';

/** Consecutive errors after which the session is in ERROR_RECOVERY. */
export const ERROR_RECOVERY_AT = 3;

/** Options of {@link Sessions}. */
export interface SessionsOptions extends PendingActionsOptions {
  /** The pending actions of the sessions (built from the same options when absent). */
  pending?: PendingActions;
}

/** Session state (NORMAL | CONFIRMATION_PENDING | ERROR_RECOVERY) and its counters. */
export class Sessions {
  /** The sessions' pending actions (open, answer, expire …). */
  readonly pending: PendingActions;

  constructor(
    private readonly db: Db,
    opts: SessionsOptions = {},
  ) {
    this.pending = opts.pending ?? new PendingActions(db, opts);
  }

  /**
   * The session as of now. `rows`: the session as a turn's first statement read it (else it is read here). When
   * something in it can have expired, expiry housekeeping runs first (expired pending → `expiredPending`, mode
   * NORMAL).
   */
  async getSession(key: SessionKey, rows?: SessionRows): Promise<SessionView> {
    const now = this.pending.now();
    const live = liveSessionView(key, rows ?? (await readSession(this.db, key)), now);
    if (live) return live;
    const { state, expired } = await this.pending.sweep(this.db, key, now);
    let pending: PendingActionView | null = null;
    if (state?.pendingActionId) {
      const row = await this.db.pendingAction.findUnique({ where: { id: state.pendingActionId } });
      if (row && row.status === 'pending' && row.expiresAt > now) pending = toPendingView(row);
    }
    return sessionView(key, state, pending, expired);
  }

  /** One more clarification round on the same request (R-S5); returns the new round count. */
  async bumpClarification(key: SessionKey): Promise<number> {
    const state = await this.write(key, { clarificationRounds: { increment: 1 } }, { clarificationRounds: 1 });
    return state.clarificationRounds;
  }

  /** The request was understood (or the flow ended): clarification rounds back to 0. */
  async resetClarification(key: SessionKey): Promise<void> {
    await this.write(key, { clarificationRounds: 0 });
  }

  /** Records a failed turn; after ERROR_RECOVERY_AT consecutive errors the mode is ERROR_RECOVERY. */
  async recordError(key: SessionKey, code: string): Promise<{ errorCount: number; mode: SessionMode }> {
    const lastError = pgText(code);
    const state = await this.write(key, { errorCount: { increment: 1 }, lastError }, { errorCount: 1, lastError });
    if (state.errorCount >= ERROR_RECOVERY_AT && state.mode !== 'CONFIRMATION_PENDING') {
      await enterErrorRecovery(this.db, key);
      return { errorCount: state.errorCount, mode: 'ERROR_RECOVERY' };
    }
    return { errorCount: state.errorCount, mode: state.mode as SessionMode };
  }

  /** Records a successful turn: errors cleared, ERROR_RECOVERY → NORMAL (a pending confirmation stays). */
  async recordSuccess(key: SessionKey, info: { lastIntent?: string; lastTool?: string } = {}): Promise<void> {
    const data = {
      errorCount: 0,
      lastError: null,
      ...(info.lastIntent !== undefined ? { lastIntent: pgText(info.lastIntent) } : {}),
      ...(info.lastTool !== undefined ? { lastTool: pgText(info.lastTool) } : {}),
    };
    await this.write(key, data, data);
    await leaveErrorRecovery(this.db, key);
  }

  /** A write after expiry housekeeping; extends the session (a write means activity). */
  private async write(
    key: SessionKey,
    update: Prisma.ConversationStateUpdateInput,
    create: Partial<Prisma.ConversationStateCreateInput> = {},
  ): Promise<StoredSession> {
    const now = this.pending.now();
    await this.pending.sweep(this.db, key, now);
    return touchSession(this.db, key, new Date(now.getTime() + this.pending.sessionTtlMs), update, create);
  }
}
