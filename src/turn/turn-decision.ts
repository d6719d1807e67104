import type { ReplyOption } from '../core/chat';
import type { AuthDecision, AuthReasonCode } from '../authorization';
import type { BrainDecision } from '../brain/brain';
import type { Continuation } from '../brain/continuation';
import type { SenderBudgetCode } from './sender-budget';
import type { LlmCallRecord } from '../core/llm-usage';
import type { BrainOutput, Confidence, Reasoning } from '../core/proposal';
import type { ErrorCategory, ErrorCode } from '../core/app-error';
import type { GuardianAction, ReasonCode as GuardianReasonCode } from '../guardian';
import type { FinalDecider } from './turn-recorder';
import type { SessionKey } from '../confirmations/session-key';
import type { CreatePendingInput } from '../confirmations/types';

/** Reason codes of the confirmation layer (answers to pending actions, session budget). */
export type SessionReasonCode =
  | 'S_USER_APPROVED'
  | 'S_USER_DENIED'
  | 'S_SECOND_CONFIRMATION'
  | 'S_ANSWER_BEFORE_QUESTION'
  | 'S_PENDING_REMINDER'
  | 'S_PENDING_EXPIRED'
  | 'S_ALREADY_DECIDED'
  | 'S_NOT_YOURS'
  | 'S_SHADOW_NOT_EXECUTED'
  | 'S_CHANGE_RECONFIRM'
  | 'S_CLARIFICATION_LOOP_ENDED';

/** Reason codes of the brain's plain answers and of the executor. */
export type AnswerReasonCode =
  | 'B_TEXT_RESPONSE'
  | 'B_CLARIFICATION'
  | 'T_EXECUTED'
  | 'T_CLARIFICATION'
  | 'T_TOOL_FAILED'
  /** A call named a person or department the directory does not know: the person is asked (issue 40). */
  | 'T_UNKNOWN_PERSON'
  | 'T_UNKNOWN_DEPARTMENT';

/**
 * The Guardian's codes as recorded: its own, and the pipeline's fail-closed stop when the organisation's
 * policies could not be read (the Guardian cannot decide without them).
 */
export type GuardianOutcomeCode = GuardianReasonCode | 'G_POLICIES_UNAVAILABLE';

/** Every reason code a turn can end with (the audit row's `reasonCode`). */
export type ReasonCode =
  | GuardianOutcomeCode
  | AuthReasonCode
  | ErrorCode
  | SessionReasonCode
  | AnswerReasonCode
  | SenderBudgetCode
  /** An earlier attempt's answer was found in the room (nothing posted again). */
  | 'O_RECONCILED';

/** What the person is told (before the Guardian's reply check, see reply.ts). */
export interface ReplyDraft {
  text: string;
  options?: ReplyOption[];
  /** A heading (confirmation questions on Discord and the console). */
  title?: string;
  /** Set when the model wrote `text`: how to ask it to write it again (the reply's claims check, reply.ts). */
  written?: ModelDraft;
}

/** A reply the model wrote: the turn's steps before it and its answer as sent (null: only its text is known). */
export interface ModelDraft {
  continuation: Continuation;
  content: BrainDecision['assistantContent'] | null;
}

/** The Guardian's verdict as recorded (for a turn with proposals: the strictest of them). */
export interface GuardianOutcome {
  action: GuardianAction;
  reasonCode: GuardianOutcomeCode;
}

/** The AuthorizationGate's decision as recorded. */
export interface AuthOutcome {
  result: AuthDecision['result'];
  reasonCode: AuthReasonCode;
}

/** What the brain answered first (for the audit row); a report of a confirmed action names only the model. */
export interface BrainFacts {
  model: string;
  outputType?: BrainOutput['type'];
  reasoning?: Reasoning;
  confidence?: Confidence;
}

/** What the context held (names and counts only). */
export interface ContextFacts {
  historyTurns?: number;
  summary?: boolean;
  sections?: string[];
  degraded: string[];
  policies?: number;
  language?: 'ja' | 'en';
}

/** How one executed (or described) call went. */
export interface CallExecution {
  status: string;
  ms: number;
  code?: string;
  errorId?: string;
  output?: unknown;
}

/** One proposal's path through the deciding layers. */
export interface ProposalTrail {
  step: number;
  tool: string;
  parameters: unknown;
  guardian: { action: GuardianAction; reasonCode: GuardianReasonCode; trace?: unknown };
  auth?: AuthOutcome;
  /** Names the directory does not know (nothing was decided or run for this call). */
  unresolved?: { kind: 'person' | 'department'; param: string }[];
  execution?: CallExecution;
}

/** A confirmed call, run from its pending action. */
export interface ConfirmedProposal {
  tool: string;
  parameters: unknown;
  pendingActionId: string;
}

/** Why a question is asked before anything runs. */
export type ConfirmReason = 'guardian' | 'gate' | 'change';

/** A question about a new call: the pending action to store once the question passed the reply check. */
export interface NewConfirmation {
  by: ConfirmReason;
  confirmationType: 'single' | 'double';
  /** What is stored (its question is the composed reply); null when nothing can be approved later (shadow mode). */
  pending: (Omit<CreatePendingInput, 'question'> & { key: SessionKey }) | null;
}

/** A question about a stored pending action (the second round of a double confirmation). */
export interface NextRound {
  pendingActionId: string;
  round: number;
}

interface DecisionBase {
  reasonCode: ReasonCode;
  decider: FinalDecider;
  reply: ReplyDraft;
  /** LLM calls made for this turn (their usage and cost are recorded). */
  calls: LlmCallRecord[];
  brain?: BrainFacts;
  context?: ContextFacts;
  /** The Guardian's own verdict: never synthesised from another layer's decision. */
  guardian?: GuardianOutcome;
  auth?: AuthOutcome;
  proposals?: (ProposalTrail | ConfirmedProposal)[];
  /** What ran: per tool for a proposal loop, or one record for a confirmed action. */
  execution?: unknown;
  error?: { errorId?: string; category: ErrorCategory };
  notes?: Record<string, unknown>;
  /** Recorded but not sent (a repeated over-budget message: the sender was already told once). */
  silent?: boolean;
}

/**
 * What one turn decided, as a typed value (issue 9): the stages return it, reply.ts composes what the
 * person reads from it, and turn/turn-audit.ts builds the audit row from it — once.
 */
export type TurnDecision =
  /** The brain answered in words. */
  | (DecisionBase & { kind: 'reply' })
  /** A question back to the person (the brain's, or a handler's "which 田中?"). */
  | (DecisionBase & { kind: 'clarify' })
  /** Asked before running: the Guardian said CONFIRM, the Gate did (person scope), or the call is a change. */
  | (DecisionBase & { kind: 'confirm'; ask: NewConfirmation | NextRound })
  /** At least one call ran. */
  | (DecisionBase & { kind: 'executed' })
  /** The Guardian stopped it (a proposal, the brain's answer, or the reply text). */
  | (DecisionBase & { kind: 'blocked'; guardian: GuardianOutcome })
  /** The AuthorizationGate did. */
  | (DecisionBase & { kind: 'denied'; auth: AuthOutcome })
  /** Something failed; the person gets a persona error message. */
  | (DecisionBase & { kind: 'error'; error: { errorId?: string; category: ErrorCategory } })
  /** Answered without the model: a stranger, a sender over budget. */
  | (DecisionBase & { kind: 'refused' })
  /** The clarification loop ended (R-S5). */
  | (DecisionBase & { kind: 'ended' })
  /** Answers to a pending confirmation that decide nothing new. */
  | (DecisionBase & { kind: 'cancelled' | 'expired' | 'ignored' | 'reminder' })
  /** An earlier attempt's reply was found posted: nothing is said again. */
  | (DecisionBase & { kind: 'delivered_earlier' });

export type DecisionKind = TurnDecision['kind'];

/** The facts of a decision other than what it is and what the person is told. */
export type DecisionFacts = Omit<DecisionBase, 'reasonCode' | 'decider' | 'reply'>;

/** What a turn decided, before its reply is known (a tool turn's summary, a confirmed action's report). */
export type Decided = Pick<DecisionBase, 'reasonCode' | 'decider' | 'guardian' | 'auth' | 'execution'> & {
  kind: Exclude<DecisionKind, 'confirm' | 'blocked' | 'denied' | 'error'> | 'blocked' | 'denied' | 'error';
};

/** The audit row's `decision` for each kind (the values turn records have always carried). */
export const DECISION_LABELS: Readonly<Record<DecisionKind, string>> = {
  reply: 'REPLY',
  clarify: 'CLARIFY',
  confirm: 'CONFIRM',
  executed: 'EXECUTED',
  blocked: 'BLOCK',
  denied: 'DENIED',
  error: 'ERROR',
  refused: 'REFUSED',
  ended: 'ENDED',
  cancelled: 'CANCELLED',
  expired: 'EXPIRED',
  ignored: 'IGNORED',
  reminder: 'REMINDER',
  delivered_earlier: 'DELIVERED_EARLIER',
};

/** Up to nine answer options numbered 1…9 (text answers "1"/"2" work on every platform). */
export function numberedOptions(labels: readonly string[]): ReplyOption[] {
  return labels.slice(0, 9).map((label, i) => ({ answer: String(i + 1), label }));
}
