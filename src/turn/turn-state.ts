import type { FoundMessage, InboundMessage } from '../core/chat';
import type { PromptSet } from '../brain/prompts';
import type { Language } from '../core/language';
import type { Step } from '../core/steps';
import type { ContextBuilder, ContextPrefetch } from '../context/context-builder';
import type { TurnContext } from '../context/types';
import type { ClaimedItem, WorkOutcome } from '../queue/work-queue';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { TraceSpan } from '../observability/tracing';
import type { SelfCritic } from './self-critique';
import type { TurnRecorder } from './turn-recorder';
import type { Delivered, Outbox } from '../queue/outbox';
import type { ConfirmationFlow, FormProposal } from './confirmation-flow';
import type { ProposalStage } from './proposal-stage';
import type { ReplyComposer } from './reply';
import type { TurnDecision } from './turn-decision';
import type { Sessions } from '../confirmations/sessions';
import type { SessionKey } from '../confirmations/session-key';
import type { TurnPrelude, TurnStore } from './turn-store';
import type { PendingActionView, SessionView } from '../confirmations/types';

/** What the steps of a turn use: built once by the composition root (`app/compose-stages.ts`). */
export interface TurnDeps {
  store: TurnStore;
  contextBuilder: ContextBuilder;
  states: Sessions;
  confirmations: ConfirmationFlow;
  proposals: ProposalStage;
  replies: ReplyComposer;
  outbox: Outbox;
  recorder: TurnRecorder;
  prompts: PromptSet;
  logger: Logger;
  metrics: Metrics;
  defaultUserLevel: number;
  shadowMode: boolean;
  /** False when no ANTHROPIC_API_KEY: the bot answers with a setup hint instead of thinking. */
  llmConfigured: boolean;
  /** Self-critique sampling (R-B6): a sampled turn stores its critique item with its record; absent when off. */
  critic?: Pick<SelfCritic, 'sample' | 'enqueued'>;
  /** A conversation summary was enqueued by a turn's last statement (R-X4): wakes a worker for it. */
  onSummaryEnqueued?: () => void;
  now?: () => Date;
}

/*
 * One user turn as the steps see it: what it started with, then what each step adds. Each type below is the turn
 * after a step; a step's type names what it reads and what it adds, and the compiler checks the order of
 * `TURN_STEPS` against them.
 */

/** What a turn starts with: the claimed item and what follows from it. */
export interface Started {
  readonly item: ClaimedItem;
  readonly msg: InboundMessage;
  /** The reply's outbox key (one reply per user message). */
  readonly replyKey: string;
  readonly turnId: string;
  /** `performance.now()` when the turn started (the turn record's `totalMs`). */
  readonly started: number;
  readonly log: Logger;
  /** The language the person wrote in: persona texts said before the context exists use it. */
  readonly language: Language;
  /** The turn's `invoke_agent` span (tracing on; a span that records nothing otherwise). */
  readonly span?: TraceSpan;
}

/** After `openTurn`: what the turn's first statement read (sender, session, budget, the reply row). */
export interface Opened extends Started {
  readonly prelude: TurnPrelude;
  /** The context read started beside the first statement (null when none was started). */
  readonly prefetch: Promise<ContextPrefetch | null>;
  /** Until when (the outbox's clock) the first statement's take of the reply's row holds, if it took it. */
  readonly heldUntil: number | undefined;
}

/** After `loadSession`: the conversation state and its pending confirmation. */
export interface WithSession extends Opened {
  readonly session: SessionView;
  readonly sessionKey: SessionKey;
}

/** After `buildContext`: what the brain sees. */
export interface WithContext extends WithSession {
  readonly ctx: TurnContext;
}

/** After `answerPendingConfirmation`. */
export interface Answered extends WithContext {
  /** The message answered a pending confirmation: what that answer decided (null: it answered none). */
  readonly answered: TurnDecision | null;
  /** 「さっきの確認は取り消したウル」, said before the reply. */
  readonly prefix?: string;
  /** The pending action the person asked to change, for `think`. */
  readonly modifying?: PendingActionView;
  /** The changed call the person wrote in a form: `think` checks it instead of asking the brain for one. */
  readonly proposed?: FormProposal;
}

/** After `think`: the turn's decision; the steps after it check and frame it. */
export interface Thought extends Answered {
  /** The turn's decision so far; its reply is what the person reads. */
  readonly decision: TurnDecision;
  /**
   * The decision as the brain stage returned it, before the reply checks framed it; null when the message answered
   * a pending confirmation (nothing new is asked or counted then).
   */
  readonly thought: TurnDecision | null;
}

/** A decided turn: what `deliver` and `record` need, whichever step decided it. */
export interface Decided extends Opened {
  readonly decision: TurnDecision;
  readonly prefix?: string;
  /** Set by `earlierAnswer`: an earlier attempt's post, found in the room (not posted again). */
  readonly foundEarlier?: FoundMessage;
}

/** After `deliver`. */
export interface Replied extends Decided {
  /** The text the person reads (the prefix, then the reply). */
  readonly replyText: string;
  /** The reply as posted (null when nothing was posted). */
  readonly sent: { platformMessageId?: string } | null;
  /** The post this turn made, for `record` to mark sent. */
  readonly posted: Delivered | null;
}

/** A retry whose reply already went out: nothing more is done, not even deliver and record. */
export const FINISHED = Symbol('finished');

/** How the steps of a turn end: decided (then delivered and recorded), or {@link FINISHED}. */
export type TurnEnd = Decided | typeof FINISHED;

/** One step of a turn (`core/steps.ts`): reads `In`, and ends the turn with a decision or goes on with `Out`. */
export type TurnStep<In, Out = In> = Step<TurnDeps, In, Out, TurnEnd>;

/** A step after the decision (`deliver`, then `record`, which ends the turn with what the work queue does). */
export type AfterDecision<In, Out> = Step<TurnDeps, In, Out, WorkOutcome>;

/** Decides the turn: the steps after it are skipped; the reply is delivered and recorded. */
export function decide(t: Opened, decision: TurnDecision): Decided {
  return { ...t, decision };
}

/** The service's clock. */
export function nowOf(d: TurnDeps): Date {
  return d.now?.() ?? new Date();
}
