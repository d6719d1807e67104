/**
 * BrainStateManager (R-S1..R-S5, seed 003 §5.1.5–5.1.7): per-session state and pending actions in
 * Postgres. A pending action executes at most once: every decision is one conditional UPDATE
 * (… WHERE status = 'pending' AND "expiresAt" > now … RETURNING), so of any number of concurrent or
 * duplicated answers exactly one wins. Database errors propagate (callers fail closed).
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/prisma';
import { safeRedactValue } from '../observability/redact';
import { pgText, sqlRunner, type Sql } from '../db/sql';
import { isOwner, jsonText, redactedCopy, toPendingView, type PendingRow } from './pending-rows';
import type { SessionKey } from './session-key';
import { effectiveMode } from './session-mode';
import {
  clearSessionPending,
  expireOne,
  lockSession,
  sessionLockName,
  sweepSession,
  touchSession,
  type Client,
} from './session-store';
import type {
  ApproveResult,
  CreatePendingInput,
  DecisionInput,
  DenyResult,
  NoDecision,
  PendingActionView,
  SessionMode,
  SessionView,
} from './types';

/** Consecutive errors after which the session is in ERROR_RECOVERY. */
export const ERROR_RECOVERY_AT = 3;

/** Options of the BrainStateManager. */
export interface BrainStateManagerOptions {
  /** Session expiry after the last write (default 30 min). */
  sessionTtlMs?: number;
  /** Pending-action expiry after creation (default 10 min). */
  pendingTtlMs?: number;
  /** Clock (tests inject one). */
  now?: () => Date;
  /** Raw SQL on the `pg` pool (the composition root passes it); through Prisma when absent. */
  sql?: Sql;
}

/** Approval input; `expectedConfirmations` guards double confirmation against stale or duplicate answers. */
export interface ApproveInput extends DecisionInput {
  /**
   * The `confirmationsGiven` at which the answered question was asked. If given and different from
   * the stored count, nothing changes ('needs_second' while a double confirmation is still pending,
   * else 'already_decided').
   */
  expectedConfirmations?: number;
  /** Outbox key of the message that will ask the next round's question (stored on 'needs_second'). */
  questionKey?: string;
}

type Inspected = { row: PendingRow } | { outcome: NoDecision; action?: PendingActionView };

/** Session state and the confirmation flow (NORMAL → CONFIRMATION_PENDING → approved → executed → NORMAL). */
export class BrainStateManager {
  private readonly sessionTtlMs: number;
  private readonly pendingTtlMs: number;
  private readonly now: () => Date;
  private readonly sql: Sql;

  constructor(
    private readonly db: Db,
    opts: BrainStateManagerOptions = {},
  ) {
    this.sessionTtlMs = opts.sessionTtlMs ?? 30 * 60_000;
    this.pendingTtlMs = opts.pendingTtlMs ?? 10 * 60_000;
    this.now = opts.now ?? (() => new Date());
    this.sql = opts.sql ?? sqlRunner(db);
  }

  /** The session as of now, after expiry housekeeping (expired pending → `expiredPending`, mode NORMAL). */
  async getSession(key: SessionKey): Promise<SessionView> {
    const now = this.now();
    const { state, expired } = await sweepSession(this.db, key, now, this.sessionTtlMs);
    let pending: PendingActionView | null = null;
    if (state?.pendingActionId) {
      const row = await this.db.pendingAction.findUnique({ where: { id: state.pendingActionId } });
      if (row && row.status === 'pending' && row.expiresAt > now) pending = toPendingView(row);
    }
    const mode = effectiveMode(state?.mode, pending !== null);
    return {
      key,
      mode,
      pending,
      expiredPending: expired,
      clarificationRounds: state?.clarificationRounds ?? 0,
      errorCount: state?.errorCount ?? 0,
      lastIntent: state?.lastIntent ?? null,
      lastTool: state?.lastTool ?? null,
      lastError: state?.lastError ?? null,
      expiresAt: state?.expiresAt ?? null,
    };
  }

  /**
   * Stores a new pending action and enters CONFIRMATION_PENDING, in one call of the database function
   * `open_pending_action` (one round trip; the migration of that name explains it): under the session's
   * lock, the session's earlier pending action is superseded (or expired, if its time was up) and the
   * session points at the new one.
   */
  async createPending(key: SessionKey, input: CreatePendingInput): Promise<PendingActionView> {
    const now = this.now();
    const row = {
      id: randomUUID(),
      ...key,
      orgId: input.orgId,
      memberId: input.memberId ?? null,
      turnId: input.turnId ?? null,
      proposal: input.proposal,
      question: input.question,
      confirmationType: input.confirmationType,
      originalMessage: input.originalMessage,
      reasoning: input.reasoning,
      confidence: input.confidence,
      questionKey: input.questionKey ?? null,
      reasonCode: input.reasonCode,
      expiresAt: new Date(now.getTime() + this.pendingTtlMs).toISOString(),
      // Put in place of the raw texts by a database trigger once the action is decided (R-O2).
      redactedCopy: redactedCopy(input),
    };
    const rows = await this.sql<PendingRow>(
      'SELECT * FROM open_pending_action($1, $2::jsonb, $3::timestamp, $4::timestamp)',
      [
        sessionLockName(key),
        jsonText(row),
        now.toISOString(),
        new Date(now.getTime() + this.sessionTtlMs).toISOString(),
      ],
    );
    return toPendingView(rows[0]!);
  }

  /**
   * Approves a pending action. Only the asker (same platform, room and account) may; a 'double'
   * confirmation needs two approvals (the first returns 'needs_second'). Race-free: the transition is
   * conditional on status, expiry, owner and the current confirmation count.
   */
  async approve(input: ApproveInput): Promise<ApproveResult> {
    const now = this.now();
    // The caller that knows the round it answers (a text answer, from this turn's session) goes straight to the
    // conditional update: if anything changed, the update finds nothing and the row is inspected after it.
    let given = input.expectedConfirmations;
    if (given === undefined) {
      const pre = await this.inspect(this.db, input.pendingId, input.key, now);
      if ('outcome' in pre) return pre;
      given = pre.row.confirmationsGiven;
    }
    const { platform, roomId, accountId } = input.key;
    const rows = await this.db.$queryRaw<PendingRow[]>`
      UPDATE pending_actions SET
        "confirmationsGiven" = "confirmationsGiven" + 1,
        status = CASE WHEN "confirmationType" = 'double' AND "confirmationsGiven" + 1 < 2
          THEN 'pending' ELSE 'approved' END,
        "decidedAt" = CASE WHEN "confirmationType" = 'double' AND "confirmationsGiven" + 1 < 2
          THEN "decidedAt" ELSE ${now} END,
        "questionKey" = CASE WHEN "confirmationType" = 'double' AND "confirmationsGiven" + 1 < 2
          THEN COALESCE(${input.questionKey ?? null}, "questionKey") ELSE "questionKey" END
      WHERE id = ${input.pendingId} AND status = 'pending' AND "expiresAt" > ${now}
        AND platform = ${platform} AND "roomId" = ${roomId} AND "accountId" = ${accountId}
        AND "confirmationsGiven" = ${given}
      RETURNING *`;
    const won = rows[0];
    if (won) return { outcome: won.status === 'approved' ? 'approved' : 'needs_second', action: toPendingView(won) };
    const post = await this.inspect(this.db, input.pendingId, input.key, now);
    return 'outcome' in post ? post : this.lostRace(post.row);
  }

  /** Denies (cancels) a pending action; only the asker may. The session returns to NORMAL. */
  async deny(input: DecisionInput): Promise<DenyResult> {
    const now = this.now();
    const pre = await this.inspect(this.db, input.pendingId, input.key, now);
    if ('outcome' in pre) return pre;
    const row = await this.db.$transaction(async (tx) => {
      const cancelled = await this.cancelOne(tx, input.pendingId, input.key, now, { cancelReason: 'denied' });
      if (cancelled) await clearSessionPending(tx, input.key, cancelled.id);
      return cancelled;
    });
    if (row) return { outcome: 'denied', action: toPendingView(row) };
    const post = await this.inspect(this.db, input.pendingId, input.key, now);
    return 'outcome' in post ? post : { outcome: 'already_decided', action: toPendingView(post.row) };
  }

  /** Cancels the session's pending action (urgent interruption, R-S4). Returns it, or null if there was none. */
  async cancelPending(key: SessionKey, reason: string): Promise<PendingActionView | null> {
    return this.db.$transaction(async (tx) => {
      const now = this.now();
      await lockSession(tx, key);
      await sweepSession(tx, key, now, this.sessionTtlMs);
      const rows = await tx.$queryRaw<PendingRow[]>`
        UPDATE pending_actions
        SET status = 'cancelled', "decidedAt" = ${now}, result = ${jsonText({ cancelReason: reason })}::jsonb
        WHERE platform = ${key.platform} AND "roomId" = ${key.roomId} AND "accountId" = ${key.accountId}
          AND status = 'pending'
        RETURNING *`;
      for (const r of rows) await clearSessionPending(tx, key, r.id);
      const newest = rows.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0];
      return newest ? toPendingView(newest) : null;
    });
  }

  /** approved → executed (with its result); false if the action was not approved. Session → NORMAL. */
  async markExecuted(pendingId: string, result: unknown): Promise<boolean> {
    return this.finish(pendingId, 'executed', result);
  }

  /** approved → failed (with the error); false if the action was not approved. Session → NORMAL. */
  async markFailed(pendingId: string, error: string): Promise<boolean> {
    return this.finish(pendingId, 'failed', { error }, pgText(error));
  }

  /**
   * When the question under `questionKey` reached the person (its outbox row was marked sent), or null
   * while it has not been delivered.
   */
  async questionShownAt(questionKey: string): Promise<Date | null> {
    const row = await this.db.outboundMessage.findUnique({
      where: { dedupeKey: questionKey },
      select: { status: true, sentAt: true },
    });
    return row?.status === 'sent' ? row.sentAt : null;
  }

  /** A pending action by id (for button clicks); ownership is checked by approve/deny. */
  async findPendingById(pendingId: string): Promise<PendingActionView | null> {
    const row = await this.db.pendingAction.findUnique({ where: { id: pendingId } });
    return row ? toPendingView(row) : null;
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
      await this.db.conversationState.updateMany({
        where: { ...key, mode: { not: 'CONFIRMATION_PENDING' } },
        data: { mode: 'ERROR_RECOVERY' },
      });
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
    await this.db.conversationState.updateMany({
      where: { ...key, OR: [{ mode: 'ERROR_RECOVERY' }, { mode: 'CONFIRMATION_PENDING', pendingActionId: null }] },
      data: { mode: 'NORMAL' },
    });
  }

  private async write(
    key: SessionKey,
    update: Parameters<typeof touchSession>[4],
    create: Parameters<typeof touchSession>[5] = {},
  ) {
    const now = this.now();
    await sweepSession(this.db, key, now, this.sessionTtlMs);
    return touchSession(this.db, key, now, this.sessionTtlMs, update, create);
  }

  /** pending → cancelled, conditional on owner and expiry; null if that did not happen. */
  private async cancelOne(
    c: Client,
    pendingId: string,
    key: SessionKey,
    now: Date,
    reason: Record<string, string>,
  ): Promise<PendingRow | null> {
    const rows = await c.$queryRaw<PendingRow[]>`
      UPDATE pending_actions SET status = 'cancelled', "decidedAt" = ${now}, result = ${jsonText(reason)}::jsonb
      WHERE id = ${pendingId} AND status = 'pending' AND "expiresAt" > ${now}
        AND platform = ${key.platform} AND "roomId" = ${key.roomId} AND "accountId" = ${key.accountId}
      RETURNING *`;
    return rows[0] ?? null;
  }

  private async finish(
    pendingId: string,
    status: 'executed' | 'failed',
    result: unknown,
    error?: string,
  ): Promise<boolean> {
    // One statement: the action's outcome, and its session back to NORMAL if it still points at the action.
    const rows = await this.db.$queryRaw<{ n: number }[]>`
      WITH p AS (
        UPDATE pending_actions
        SET status = ${status}, "executedAt" = ${this.now()}, result = ${jsonText(safeRedactValue(result))}::jsonb
        WHERE id = ${pendingId} AND status = 'approved'
        RETURNING id, platform, "roomId", "accountId"),
      s AS (
        UPDATE conversation_states c
        SET mode = 'NORMAL', "pendingActionId" = NULL, "updatedAt" = now(),
            "lastError" = CASE WHEN ${error !== undefined} THEN ${error ?? null} ELSE c."lastError" END
        FROM p
        WHERE c.platform = p.platform AND c."roomId" = p."roomId" AND c."accountId" = p."accountId"
          AND c."pendingActionId" = p.id)
      SELECT (SELECT count(*) FROM p)::int AS n`;
    return (rows[0]?.n ?? 0) > 0;
  }

  /** Why a pending action cannot be decided by `key` now, or the row if it can (expiring it if due). */
  private async inspect(c: Client, pendingId: string, key: SessionKey, now: Date): Promise<Inspected> {
    const row = await c.pendingAction.findUnique({ where: { id: pendingId } });
    if (!row) return { outcome: 'not_found' };
    if (!isOwner(row, key)) return { outcome: 'not_yours' };
    if (row.status === 'expired') return { outcome: 'expired', action: toPendingView(row) };
    if (row.status !== 'pending') return { outcome: 'already_decided', action: toPendingView(row) };
    if (row.expiresAt.getTime() <= now.getTime()) {
      // Whoever expires it resets the session; if something else decided it meanwhile, say so.
      const latest =
        (await expireOne(c, row.id, now)) ?? (await c.pendingAction.findUnique({ where: { id: row.id } })) ?? row;
      const decidedElsewhere = latest.status !== 'expired' && latest.status !== 'pending';
      return { outcome: decidedElsewhere ? 'already_decided' : 'expired', action: toPendingView(latest) };
    }
    return { row };
  }

  /** This answer changed nothing because another one was counted first. */
  private lostRace(row: PendingRow): ApproveResult {
    const stillPending = row.status === 'pending' && row.confirmationType === 'double' && row.confirmationsGiven > 0;
    return { outcome: stillPending ? 'needs_second' : 'already_decided', action: toPendingView(row) };
  }
}

const DAY_MS = 86_400_000;

/**
 * Settles pending actions nobody decided: still pending a day after their expiry → expired; approved but
 * never run for a day → failed. Either way the database trigger replaces their raw texts with the
 * redacted copies, so no undecided action keeps raw text for long (retention).
 */
export async function settleStalePending(db: Db, now: Date): Promise<number> {
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

/** Deletes decided pending actions created before `before` (retention); undecided ones stay. */
export async function purgeDecidedPending(db: Db, before: Date): Promise<number> {
  const where = { createdAt: { lt: before }, status: { notIn: ['pending', 'approved'] } };
  return (await db.pendingAction.deleteMany({ where })).count;
}
