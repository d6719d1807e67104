import type { FoundMessage, InboundMessage } from '../core/chat';
import type { PromptSet } from '../brain/prompts';
import type { Language } from '../core/language';
import type { ContextBuilder, ContextPrefetch } from '../context/context-builder';
import type { TurnContext } from '../context/types';
import type { ClaimedItem, WorkOutcome } from '../queue/work-queue';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { SelfCritic } from './self-critique';
import type { TurnRecorder } from './turn-recorder';
import type { Delivered, Outbox, TakeAhead } from '../queue/outbox';
import type { ConfirmationFlow } from './confirmation-flow';
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

/**
 * One user turn as the steps see it: what it started with, then what each step adds. A field a step sets is
 * named after that step's result; fields marked "set by" are there for every step after it.
 */
export interface TurnState {
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

  /** Set by `openTurn`: what the turn's first statement read (sender, session, budget, the reply row). */
  prelude?: TurnPrelude;
  /** Set by `openTurn`: the context read started beside the first statement (null when none was started). */
  prefetch?: Promise<ContextPrefetch | null>;
  /** Set by `openTurn`: the reply's outbox row as the first statement took it, if it did. */
  taken?: TakeAhead;
  /** Set by `loadSession`: the conversation state and its pending confirmation. */
  session?: SessionView;
  sessionKey?: SessionKey;
  /** Set by `buildContext`: what the brain sees. */
  ctx?: TurnContext;
  /** Set by `answerPendingConfirmation`: 「さっきの確認は取り消したウル」 said before the reply. */
  prefix?: string;
  /** Set by `answerPendingConfirmation`: the pending action the person asked to change, for `think`. */
  modifying?: PendingActionView;
  /** Set by `think`: the decision as the brain stage returned it, before the reply checks framed it. */
  thought?: TurnDecision;

  /** The turn's decision so far; its reply is what the person reads. */
  decision?: TurnDecision;
  /** A step decided the turn: the steps after it are skipped, up to `deliver` and `record`. */
  decided: boolean;
  /** A retry whose reply already went out: nothing more is done, not even deliver and record. */
  finished: boolean;
  /** Set by `earlierAnswer`: an earlier attempt's post, found in the room (not posted again). */
  foundEarlier?: FoundMessage;
  /** Set by `deliver`: the text the person reads (the prefix, then the reply). */
  replyText?: string;
  /** Set by `deliver`: the reply as posted (null when nothing was posted). */
  sent?: { platformMessageId?: string } | null;
  /** Set by `deliver`: the post this turn made, for `record` to mark sent. */
  posted?: Delivered | null;
  /** Set by `record`: what the work queue does with the item. */
  outcome?: WorkOutcome;
}

/** One step of a turn: reads and adds to the turn's state; may decide the turn ({@link decide}). */
export type TurnStep = (t: TurnState, d: TurnDeps) => Promise<void> | void;

/** Decides the turn: the remaining steps are skipped, and the reply is delivered and recorded. */
export function decide(t: TurnState, decision: TurnDecision): void {
  t.decision = decision;
  t.decided = true;
}

/** The service's clock. */
export function nowOf(d: TurnDeps): Date {
  return d.now?.() ?? new Date();
}

/** A field an earlier step sets; a step that runs before it is a bug in the step list. */
export function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`turn step order: ${what} is not set yet`);
  return value;
}
