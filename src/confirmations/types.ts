/** Plain views of the conversation state and pending actions (R-S1); no Prisma types leak out. */
import type { ToolProposal } from '../core/proposal';
import type { SessionKey } from './session-key';

/** Session modes (seed 003 §5.1.5). */
export type SessionMode = 'NORMAL' | 'CONFIRMATION_PENDING' | 'MULTI_STEP_FLOW' | 'ERROR_RECOVERY';

/** Lifecycle of a pending action: pending → approved → executed | failed; pending → cancelled | expired. */
export type PendingStatus = 'pending' | 'approved' | 'executed' | 'cancelled' | 'expired' | 'failed';

/** A stored proposal: the tool call plus whatever the caller kept with it (summary, Guardian note…). */
export type StoredProposal = ToolProposal & Record<string, unknown>;

/** A pending (or decided) action awaiting or past the person's confirmation. */
export interface PendingActionView {
  id: string;
  orgId: string;
  key: SessionKey;
  memberId: string | null;
  turnId: string | null;
  status: PendingStatus;
  proposal: StoredProposal;
  question: string;
  confirmationType: 'single' | 'double';
  confirmationsGiven: number;
  /** Outbox key of the question of the current round (null for rows from before rounds were bound). */
  questionKey: string | null;
  originalMessage: string;
  reasoning: string;
  confidence: number;
  reasonCode: string;
  expiresAt: Date;
  decidedAt: Date | null;
  executedAt: Date | null;
  result: unknown;
  createdAt: Date;
  /** The span of the turn that asked, as a W3C traceparent (null: tracing was off); the answer's turn links to it. */
  traceContext?: string | null;
  /**
   * When the current round's question reached the person (its outbox row was marked sent; null: not yet),
   * when it was read together with the action (a turn's first statement); undefined when not read.
   */
  questionShownAt?: Date | null;
}

/** The session as a turn sees it. */
export interface SessionView {
  key: SessionKey;
  mode: SessionMode;
  /** The action awaiting an answer (status 'pending', not expired), if any. */
  pending: PendingActionView | null;
  /** A pending action that expired since the last look; say 「確認の期限が切れたので、実行していません」. */
  expiredPending: PendingActionView | null;
  clarificationRounds: number;
  errorCount: number;
  lastIntent: string | null;
  lastTool: string | null;
  lastError: string | null;
  /** When the session expires (null: no stored session yet). */
  expiresAt: Date | null;
}

/** What `PendingActions.open` stores. */
export interface CreatePendingInput {
  orgId: string;
  memberId: string | null;
  turnId?: string;
  proposal: StoredProposal;
  question: string;
  confirmationType: 'single' | 'double';
  originalMessage: string;
  reasoning: string;
  confidence: number;
  reasonCode: string;
  /** Outbox key of the message that asks the question (answers must come after it was delivered). */
  questionKey?: string;
}

/** Who answers which pending action. */
export interface DecisionInput {
  pendingId: string;
  key: SessionKey;
}

/** Outcomes shared by approve and deny when nothing was decided. */
export type NoDecision = 'expired' | 'not_found' | 'not_yours' | 'already_decided';

/** Result of `approve`. `action` is absent for 'not_found' and 'not_yours'. */
export interface ApproveResult {
  outcome: 'approved' | 'needs_second' | NoDecision;
  action?: PendingActionView;
}

/** Result of `deny`. */
export interface DenyResult {
  outcome: 'denied' | NoDecision;
  action?: PendingActionView;
}
