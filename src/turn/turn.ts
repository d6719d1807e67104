import { randomUUID } from 'node:crypto';
import type { InboundMessage } from '../core/chat';
import { detectLanguage } from '../core/language';
import { replyKeyOf, type ClaimedItem, type WorkOutcome } from '../queue/work-queue';
import { answerPendingConfirmation } from './steps/answer-pending-confirmation';
import { askConfirmation } from './steps/ask-confirmation';
import { buildContext } from './steps/build-context';
import { checkReply } from './steps/check-reply';
import { clarificationBudget } from './steps/clarification-budget';
import { deliver } from './steps/deliver';
import { earlierAnswer } from './steps/earlier-answer';
import { crashedEveryAttempt, crashError, giveUp, turnFailed } from './steps/give-up';
import { keepReplyHonest } from './steps/keep-reply-honest';
import { loadSession } from './steps/load-session';
import { noModel } from './steps/no-model';
import { openTurn } from './steps/open-turn';
import { record } from './steps/record';
import { replyAlreadySent } from './steps/reply-already-sent';
import { senderBudget } from './steps/sender-budget';
import { stranger } from './steps/stranger';
import { think } from './steps/think';
import { trackErrors } from './steps/track-errors';
import type { TurnDeps, TurnState, TurnStep } from './turn-state';

/**
 * One user turn (SPEC §2), in order. Each step is a small function in `steps/` over the turn's state. The steps run
 * until one of them decides the turn (`decide`); then the reply is delivered and recorded ({@link AFTER_DECISION}).
 * A step that throws ends in the failure path (`steps/give-up.ts`).
 */
export const TURN_STEPS: readonly TurnStep[] = [
  openTurn, //                    the first statement: claim, reply row, message, sender, session, budget
  replyAlreadySent, //            a retry whose reply went out: stop
  earlierAnswer, //               a retry whose reply may have landed: look in the room first
  senderBudget, //                said without the model: over a per-sender budget
  stranger, //                    … not a member
  noModel, //                     … no ANTHROPIC_API_KEY
  loadSession, //                 the conversation state and its pending confirmation
  buildContext, //                what the brain sees
  answerPendingConfirmation, //   はい / いいえ / a change to a pending action
  think, //                       brain → Guardian → Gate → executor, until a final answer
  keepReplyHonest, //             the reply claims only what happened
  checkReply, //                  the Guardian's reply check
  askConfirmation, //             a CONFIRM opens a pending action and asks
  clarificationBudget, //         R-S5: too many questions back end the flow
  trackErrors, //                 consecutive errors → ERROR_RECOVERY
];

/** What always follows a decision. */
export const AFTER_DECISION: readonly TurnStep[] = [deliver, record];

/** Runs one user turn over `item` (a claimed `user_request`). */
export async function runTurn(d: TurnDeps, item: ClaimedItem): Promise<WorkOutcome | void> {
  const t = startTurn(d, item);
  if (crashedEveryAttempt(t)) throw await giveUp(t, d, crashError());
  try {
    for (const step of TURN_STEPS) {
      await step(t, d);
      if (t.finished) return;
      if (t.decided) break;
    }
    for (const step of AFTER_DECISION) await step(t, d);
    return t.outcome;
  } catch (err) {
    throw await turnFailed(t, d, err);
  }
}

function startTurn(d: TurnDeps, item: ClaimedItem): TurnState {
  const msg = item.payload as InboundMessage;
  const turnId = randomUUID();
  return {
    item,
    msg,
    replyKey: replyKeyOf(item),
    turnId,
    started: performance.now(),
    log: d.logger.child({ turnId, workItemId: String(item.id), platform: msg.platform, roomId: msg.roomId }),
    language: detectLanguage(msg.answerText ?? msg.text),
    decided: false,
    finished: false,
  };
}

/** The turn as the worker pool and the composition root see it. */
export class TurnRunner {
  constructor(private readonly d: TurnDeps) {}

  handleUserRequest(item: ClaimedItem): Promise<WorkOutcome | void> {
    return runTurn(this.d, item);
  }
}
