/**
 * Pending actions (R-S1..R-S4, seed 003 §5.1.5–5.1.7): the only writer of the pending_actions table, and the
 * whole life of a confirmation — open (the question is asked), whether an answer counts for the round asked,
 * approve (once, or twice for a double confirmation: the second question is asked again), deny, cancel,
 * expire, and the outcome once the approved call ran. Opening runs in the database function
 * `open_pending_action` (its migration states the same rules as {@link PendingActions.sweep}; decision record
 * 0005). The words said to the person are the confirmation flow's (`turn/confirmation-flow.ts`); the
 * session's side of each change is `./session-store`.
 *
 * An action executes at most once: every decision is one conditional update (… status = 'pending' AND
 * "expiresAt" > now AND the asker AND the round … RETURNING), so of any number of concurrent or duplicated
 * answers exactly one wins. Opening and cancelling hold the session's advisory lock, so two writers of one
 * session are serialised. Database errors propagate (callers fail closed).
 */
import { randomUUID } from 'node:crypto';
import { Prisma, type Db } from '../db/prisma';
import { pgText, sqlRunner, type Sql } from '../db/sql';
import { safeRedactValue } from '../observability/redact';
import { currentTraceparent } from '../observability/tracing';
import { isOwner, jsonText, redactedCopy, toPendingView, type PendingRow } from './pending-rows';
import type { SessionKey } from './session-key';
import { isPlainSession } from './session-mode';
import {
  clearSessionPending,
  lockSession,
  readSessionRow,
  resetExpiredSession,
  sessionLockName,
  type Client,
  type StoredSession,
} from './session-store';
import type {
  ApproveResult,
  CreatePendingInput,
  DecisionInput,
  DenyResult,
  NoDecision,
  PendingActionView,
} from './types';

/** Options of {@link PendingActions}. */
export interface PendingActionsOptions {
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
  /** The action's confirmation type, when the caller has read the action (saves a read). */
  confirmationType?: 'single' | 'double';
  /** Outbox key of the message that will ask the next round's question (stored on 'needs_second'). */
  questionKey?: string;
}

/** An answer as a message gives it: the round its button names (none for text), and when it was sent. */
export interface RoundAnswer {
  round?: number;
  sentAt: Date;
}

/** Result of {@link PendingActions.sweep}. */
export interface Sweep {
  /** The session row after housekeeping (null: none stored). */
  state: StoredSession | null;
  /** The pending action that expired in this sweep (the session's current one first), if any. */
  expired: PendingActionView | null;
}

type Inspected = { row: PendingRow } | { outcome: NoDecision; action?: PendingActionView };

/** How long after its decision a repeated 「はい」/「いいえ」 is read as about that action. */
const RECENT_MS = 120_000;
const DAY_MS = 86_400_000;

/** The pending actions of sessions: open → (approve | deny | cancel | expire) → executed | failed. */
export class PendingActions {
  readonly sessionTtlMs: number;
  readonly pendingTtlMs: number;
  readonly now: () => Date;
  private readonly sql: Sql;

  constructor(
    private readonly db: Db,
    opts: PendingActionsOptions = {},
  ) {
    this.sessionTtlMs = opts.sessionTtlMs ?? 30 * 60_000;
    this.pendingTtlMs = opts.pendingTtlMs ?? 10 * 60_000;
    this.now = opts.now ?? (() => new Date());
    this.sql = opts.sql ?? sqlRunner(db);
  }

  /**
   * Opens a pending action and puts the session in CONFIRMATION_PENDING, in one call of the database function
   * `open_pending_action` (decision record 0005: one statement instead of a transaction of six): under the
   * session's advisory lock, the session's earlier pending action ends as {@link sweep} would end it (expired when
   * its time or the session's is up), else cancelled as superseded by the new one; an expired session starts
   * afresh and points at the new action.
   */
  async open(key: SessionKey, input: CreatePendingInput): Promise<PendingActionView> {
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
      // The asking turn's span (tracing on): the turn of the answer links to it.
      traceContext: currentTraceparent() ?? null,
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
   * Whether an approval answers the question of the action's current round: a button names its round; a text
   * answer must have been sent after that round's question was delivered (a double click, or a quick second
   * 「はい」 before the second question was shown, is asked again, never counted twice).
   */
  async answersRound(pending: PendingActionView, answer: RoundAnswer): Promise<boolean> {
    if (answer.round !== undefined) return answer.round === pending.confirmationsGiven;
    if (!pending.questionKey) return true;
    // Read with the session in the turn's first statement, or now.
    const shownAt =
      pending.questionShownAt !== undefined ? pending.questionShownAt : await this.questionShownAt(pending.questionKey);
    return shownAt !== null && answer.sentAt.getTime() >= shownAt.getTime();
  }

  /**
   * Approves a pending action. Only the asker (same platform, room and account) may; a 'double'
   * confirmation needs two approvals (the first returns 'needs_second'). Race-free: the transition is
   * conditional on status, expiry, owner and the current confirmation count.
   */
  async approve(input: ApproveInput): Promise<ApproveResult> {
    const now = this.now();
    // A caller that read the action (a text answer, from this turn's session) goes straight to the conditional
    // update: if anything changed, the update finds nothing and the row is inspected after it.
    let given = input.expectedConfirmations;
    let type = input.confirmationType;
    if (given === undefined || type === undefined) {
      const pre = await this.inspect(input.pendingId, input.key, now);
      if ('outcome' in pre) return pre;
      given ??= pre.row.confirmationsGiven;
      type = pre.row.confirmationType === 'double' ? 'double' : 'single';
    }
    const needsSecond = type === 'double' && given + 1 < 2;
    const rows = await this.db.pendingAction.updateManyAndReturn({
      where: {
        id: input.pendingId,
        ...input.key,
        status: 'pending',
        expiresAt: { gt: now },
        confirmationsGiven: given,
        confirmationType: type === 'double' ? 'double' : { not: 'double' },
      },
      data: needsSecond
        ? { confirmationsGiven: given + 1, ...(input.questionKey ? { questionKey: input.questionKey } : {}) }
        : { confirmationsGiven: given + 1, status: 'approved', decidedAt: now },
    });
    const won = rows[0];
    if (won) return { outcome: won.status === 'approved' ? 'approved' : 'needs_second', action: toPendingView(won) };
    const post = await this.inspect(input.pendingId, input.key, now);
    return 'outcome' in post ? post : lostRace(post.row);
  }

  /** Denies (cancels) a pending action; only the asker may. The session returns to NORMAL. */
  async deny(input: DecisionInput): Promise<DenyResult> {
    const now = this.now();
    const pre = await this.inspect(input.pendingId, input.key, now);
    if ('outcome' in pre) return pre;
    const row = await this.db.$transaction(async (tx) => {
      const [cancelled] = await tx.pendingAction.updateManyAndReturn({
        where: { id: input.pendingId, ...input.key, status: 'pending', expiresAt: { gt: now } },
        data: { status: 'cancelled', decidedAt: now, result: { cancelReason: 'denied' } },
      });
      if (cancelled) await clearSessionPending(tx, input.key, cancelled.id);
      return cancelled ?? null;
    });
    if (row) return { outcome: 'denied', action: toPendingView(row) };
    const post = await this.inspect(input.pendingId, input.key, now);
    return 'outcome' in post ? post : { outcome: 'already_decided', action: toPendingView(post.row) };
  }

  /**
   * Cancels the session's pending action (a change request, an urgent interruption (R-S4), cancelled background
   * work). Returns it, or null if there was none.
   */
  async cancel(key: SessionKey, reason: string): Promise<PendingActionView | null> {
    return this.db.$transaction(async (tx) => {
      const now = this.now();
      await lockSession(tx, key);
      await this.sweep(tx, key, now);
      const rows = await tx.pendingAction.updateManyAndReturn({
        where: { ...key, status: 'pending' },
        data: { status: 'cancelled', decidedAt: now, result: { cancelReason: pgText(reason) } },
      });
      for (const r of rows) await clearSessionPending(tx, key, r.id);
      const newest = rows.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0];
      return newest ? toPendingView(newest) : null;
    });
  }

  /**
   * Expiry housekeeping of a session: an expired session (expiresAt < now) resets to a fresh NORMAL session and
   * its pending actions expire; pending actions past their own expiresAt expire. Idempotent; only one of several
   * concurrent sweeps reports a given expired action.
   */
  async sweep(c: Client, key: SessionKey, now: Date): Promise<Sweep> {
    const before = await readSessionRow(c, key);
    // Fast path (most turns): no session, or a live one pointing at no pending action — nothing can expire.
    if (before === null || isPlainSession(before, now)) return { state: before, expired: null };
    const sessionExpired = before.expiresAt.getTime() < now.getTime();
    const open = { ...key, status: 'pending' };
    const expired = await c.pendingAction.updateManyAndReturn({
      where: sessionExpired ? open : { ...open, expiresAt: { lte: now } },
      data: { status: 'expired', decidedAt: now },
    });
    let changed = false;
    if (sessionExpired) {
      changed = (await resetExpiredSession(c, key, now, new Date(now.getTime() + this.sessionTtlMs))) > 0;
    } else if (before.pendingActionId && expired.some((r) => r.id === before.pendingActionId)) {
      changed = (await clearSessionPending(c, key, before.pendingActionId)) > 0;
    }
    const state = changed ? await readSessionRow(c, key) : before;
    const newestFirst = [...expired].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
    const report = newestFirst.find((r) => r.id === before.pendingActionId) ?? newestFirst[0];
    return { state, expired: report ? toPendingView(report) : null };
  }

  /** approved → executed (with its result); false if the action was not approved. Session → NORMAL. */
  async markExecuted(pendingId: string, result: unknown): Promise<boolean> {
    return this.finish(pendingId, 'executed', result);
  }

  /** approved → failed (with the error); false if the action was not approved. Session → NORMAL. */
  async markFailed(pendingId: string, error: string): Promise<boolean> {
    return this.finish(pendingId, 'failed', { error }, pgText(error));
  }

  /** A pending action by id (for button clicks); ownership is checked by approve/deny. */
  async find(pendingId: string): Promise<PendingActionView | null> {
    const row = await this.db.pendingAction.findUnique({ where: { id: pendingId } });
    return row ? toPendingView(row) : null;
  }

  /**
   * The session's action decided in the last two minutes (a duplicate or retried answer, or a 「はい」 after a
   * button), if any.
   */
  async recentlyDecided(key: SessionKey): Promise<PendingActionView | null> {
    const row = await this.db.pendingAction.findFirst({
      where: {
        ...key,
        status: { in: ['approved', 'executed', 'cancelled', 'failed'] },
        decidedAt: { gte: new Date(Date.now() - RECENT_MS) },
      },
      orderBy: { decidedAt: 'desc' },
    });
    return row ? toPendingView(row) : null;
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

  /** The outcome of an approved action, and its session back to NORMAL if it still points at the action. */
  private async finish(
    pendingId: string,
    status: 'executed' | 'failed',
    result: unknown,
    error?: string,
  ): Promise<boolean> {
    const [row] = await this.db.pendingAction.updateManyAndReturn({
      where: { id: pendingId, status: 'approved' },
      data: { status, executedAt: this.now(), result: json(safeRedactValue(result)) },
      select: { id: true, platform: true, roomId: true, accountId: true },
    });
    if (!row) return false;
    await clearSessionPending(
      this.db,
      { platform: row.platform, roomId: row.roomId, accountId: row.accountId },
      row.id,
      error,
    );
    return true;
  }

  /** Why a pending action cannot be decided by `key` now, or the row if it can (expiring it if due). */
  private async inspect(pendingId: string, key: SessionKey, now: Date): Promise<Inspected> {
    const row = await this.db.pendingAction.findUnique({ where: { id: pendingId } });
    if (!row) return { outcome: 'not_found' };
    if (!isOwner(row, key)) return { outcome: 'not_yours' };
    if (row.status === 'expired') return { outcome: 'expired', action: toPendingView(row) };
    if (row.status !== 'pending') return { outcome: 'already_decided', action: toPendingView(row) };
    if (row.expiresAt.getTime() <= now.getTime()) {
      // Whoever expires it resets the session; if something else decided it meanwhile, say so.
      const latest =
        (await this.expireOne(row.id, now)) ??
        (await this.db.pendingAction.findUnique({ where: { id: row.id } })) ??
        row;
      const decidedElsewhere = latest.status !== 'expired' && latest.status !== 'pending';
      return { outcome: decidedElsewhere ? 'already_decided' : 'expired', action: toPendingView(latest) };
    }
    return { row };
  }

  /** pending → expired for one action whose expiry has passed; null if it was not pending any more. */
  private async expireOne(pendingId: string, now: Date): Promise<PendingRow | null> {
    const [row] = await this.db.pendingAction.updateManyAndReturn({
      where: { id: pendingId, status: 'pending', expiresAt: { lte: now } },
      data: { status: 'expired', decidedAt: now },
    });
    if (!row) return null;
    await clearSessionPending(
      this.db,
      { platform: row.platform, roomId: row.roomId, accountId: row.accountId },
      row.id,
    );
    return row;
  }
}

/** This answer changed nothing because another one was counted first. */
function lostRace(row: PendingRow): ApproveResult {
  const stillPending = row.status === 'pending' && row.confirmationType === 'double' && row.confirmationsGiven > 0;
  return { outcome: stillPending ? 'needs_second' : 'already_decided', action: toPendingView(row) };
}

/** A value for a JSON column: text without NUL characters, unserialisable values as their string form. */
function json(value: unknown): Prisma.InputJsonValue | typeof Prisma.JsonNull {
  const parsed = JSON.parse(jsonText(value)) as Prisma.InputJsonValue | null;
  return parsed === null ? Prisma.JsonNull : parsed;
}

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
