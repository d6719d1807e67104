import { randomUUID } from 'node:crypto';
import type { InboundMessage } from '../core/chat';
import { detectLanguage } from '../core/language';
import { Steps } from '../core/steps';
import { replyKeyOf, type ClaimedItem, type WorkOutcome } from '../queue/work-queue';
import { deliver, record } from './steps/after-decision';
import { askConfirmation, clarificationBudget, trackErrors } from './steps/after-thought';
import { answerPendingConfirmation } from './steps/answer-pending-confirmation';
import { buildContext } from './steps/build-context';
import { crashedEveryAttempt, crashError, giveUp, turnFailed } from './steps/give-up';
import { loadSession } from './steps/load-session';
import { earlierAnswer, openTurn, replyAlreadySent } from './steps/open';
import { checkReply, keepReplyHonest, think } from './steps/think';
import { noModel, senderBudget, stranger } from './steps/without-model';
import { FINISHED, type Decided, type Started, type TurnDeps, type TurnEnd } from './turn-state';
import { GEN_AI, GEN_AI_AGENT, GEN_AI_OPERATION, GEN_AI_PROVIDER, HISHO, spanName } from '../observability/genai';
import { messagesAttribute } from '../observability/span-content';
import { captureContent, inSpan, stepWatch, type SpanAttributes } from '../observability/tracing';

/**
 * One user turn (SPEC §2), in order. Each step is a small function in `steps/` (the shape of `core/steps.ts`): it
 * reads what the steps before it added to the turn and either decides the turn or goes on (`next`) with what it
 * adds; the compiler checks each step's place against the fields it reads (`turn-state.ts`). A decided turn is
 * delivered and recorded ({@link AFTER_DECISION}); a step that throws ends in the failure path (`steps/give-up.ts`).
 */
export const TURN_STEPS = Steps.of<TurnDeps, Started, TurnEnd>()
  .then(openTurn) //                    the first statement: reply row, message, sender, session, budget
  .then(replyAlreadySent) //            a retry whose reply went out: stop
  .then(earlierAnswer) //               a retry whose reply may have landed: look in the room first
  .then(senderBudget) //                said without the model: over a per-sender budget
  .then(stranger) //                    … not a member
  .then(noModel) //                     … no ANTHROPIC_API_KEY
  .then(loadSession) //                 the conversation state and its pending confirmation
  .then(buildContext) //                what the brain sees
  .then(answerPendingConfirmation) //   はい / いいえ / a change to a pending action
  .then(think) //                       brain → Guardian → Gate → executor, until a final answer
  .then(keepReplyHonest) //             the reply claims only what happened
  .then(checkReply) //                  the Guardian's reply check
  .then(askConfirmation) //             a CONFIRM opens a pending action and asks
  .then(clarificationBudget) //         R-S5: too many questions back end the flow
  .then(trackErrors); //                consecutive errors → ERROR_RECOVERY

/** What always follows a decision: the reply is posted, then the turn's last statement records it. */
export const AFTER_DECISION = Steps.of<TurnDeps, Decided, WorkOutcome>().then(deliver).then(record);

/**
 * Runs one user turn over `item` (a claimed `user_request`): with tracing on, in an `invoke_agent` span that joins
 * the trace of the webhook that stored the item, a span per step inside it (`observability/tracing.ts`).
 */
export function runTurn(d: TurnDeps, item: ClaimedItem): Promise<WorkOutcome | void> {
  const started = startTurn(d, item);
  return inSpan(
    spanName.invokeAgent(),
    { parent: item.traceContext, attributes: turnAttributes(started) },
    async (span): Promise<WorkOutcome | void> => {
      const t: Started = { ...started, span };
      if (crashedEveryAttempt(t)) throw await giveUp(t, d, crashError());
      const watch = stepWatch('step');
      try {
        const end = await TURN_STEPS.run(t, d, async (decided) => decided, watch);
        if (end === FINISHED) return;
        span.set(decisionAttributes(end));
        return await AFTER_DECISION.run(end, d, () => Promise.reject(new Error('record ended no turn')), watch);
      } catch (err) {
        throw await turnFailed(t, d, err);
      }
    },
  );
}

function turnAttributes(t: Started): SpanAttributes {
  return {
    [GEN_AI.operationName]: GEN_AI_OPERATION.invokeAgent,
    [GEN_AI.agentName]: GEN_AI_AGENT,
    [GEN_AI.providerName]: GEN_AI_PROVIDER,
    [HISHO.turnId]: t.turnId,
    [HISHO.workItemId]: String(t.item.id),
    [HISHO.attempt]: t.item.attempts,
    [HISHO.platform]: t.msg.platform,
    ...(captureContent() ? { [GEN_AI.inputMessages]: messagesAttribute('user', t.msg.text) } : {}),
  };
}

/** The decision, its tokens summed over the turn's model calls, and (content capture on) the reply. */
function decisionAttributes(end: Decided): SpanAttributes {
  const { decision } = end;
  const calls = decision.calls ?? [];
  const sum = (f: (c: (typeof calls)[number]) => number) => calls.reduce((a, c) => a + f(c), 0);
  return {
    [HISHO.decision]: decision.kind,
    [HISHO.reasonCode]: decision.reasonCode,
    [GEN_AI.requestModel]: decision.brain?.model ?? undefined,
    ...(calls.length > 0
      ? {
          [GEN_AI.inputTokens]: sum((c) => c.usage.inputTokens),
          [GEN_AI.outputTokens]: sum((c) => c.usage.outputTokens),
          [GEN_AI.cacheReadTokens]: sum((c) => c.usage.cacheReadTokens),
          [GEN_AI.cacheWriteTokens]: sum((c) => c.usage.cacheWriteTokens),
          [HISHO.costUsd]: Math.round(sum((c) => c.costUsd) * 1e6) / 1e6,
        }
      : {}),
    ...(captureContent() && !decision.silent
      ? { [GEN_AI.outputMessages]: messagesAttribute('assistant', decision.reply.text) }
      : {}),
  };
}

function startTurn(d: TurnDeps, item: ClaimedItem): Started {
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
  };
}

/** The turn as the worker pool and the composition root see it. */
export class TurnRunner {
  constructor(private readonly d: TurnDeps) {}

  handleUserRequest(item: ClaimedItem): Promise<WorkOutcome | void> {
    return runTurn(this.d, item);
  }
}
