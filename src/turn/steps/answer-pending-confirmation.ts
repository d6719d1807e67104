import { personaMessage } from '../../core/messages';
import type { TurnContext } from '../../context/types';
import type { PromptSet } from '../../brain/prompts';
import type { PendingActionView } from '../../confirmations/types';
import { HISHO } from '../../observability/genai';
import type { Answered, TurnStep, WithContext } from '../turn-state';

/**
 * Step 9 — the message may answer a pending confirmation (`turn/confirmation-flow.ts`): 「はい」 runs the
 * action (after the Gate checks again), 「いいえ」 cancels, a late or stale click is told what became of it. Such
 * an answer is the turn's decision instead of a thought (`think` passes it on): its reply passes the same two
 * checks (`keepReplyHonest`, `checkReply`), and nothing new is asked or counted. Otherwise the turn goes on to
 * think — with the pending action the person asked to change as context, and a note to say first when an urgent
 * request cancelled one.
 */
export const answerPendingConfirmation: TurnStep<WithContext, Answered> = async (t, d, next) => {
  const { ctx, session } = t;
  // The message answers the question of an earlier turn: its trace links to that turn's (tracing on).
  if (session.pending)
    t.span?.link(session.pending.traceContext, {
      [HISHO.linkReason]: 'answers_confirmation',
      [HISHO.pendingActionId]: session.pending.id,
    });
  const step = await d.confirmations.answer({ msg: t.msg, session, ctx, item: t.item, actor: t.prelude.actor });
  if (step.kind === 'decided') return next({ ...t, answered: step.decision });
  if (step.modifying) ctx.sections.push(changeRequest(d.prompts, step.modifying));
  return next({ ...t, answered: null, modifying: step.modifying, prefix: step.prefix, proposed: step.proposed });
};

/** The pending action the person asked to change, as context for the brain's new proposal. */
function changeRequest(prompts: PromptSet, m: PendingActionView): TurnContext['sections'][number] {
  return {
    title: '保留中の操作（この人が変更を求めています）',
    lines: [
      `${String(m.proposal.summary ?? m.proposal.toolName)}`,
      `tool: ${m.proposal.toolName} / parameters: ${JSON.stringify(m.proposal.parameters)}`,
      personaMessage(prompts, 'confirm.modify_hint', 'en'),
    ],
  };
}
