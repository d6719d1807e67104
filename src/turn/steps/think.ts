/*
 * Steps 10–12: the brain thinks (the proposal loop), then the reply is checked: honest, then the Guardian's check.
 */
import type { Answered, Thought, TurnStep } from '../turn-state';

/**
 * Step 10 — think: the brain proposes; each proposal goes through the Guardian, then the AuthorizationGate,
 * then the executor; results return to the brain until a final answer or the step budget
 * (`turn/proposal-stage.ts`). The decision it returns is checked and framed by the steps after it. A message that
 * answered a pending confirmation is not thought about: that answer is the decision; a call the person changed in a
 * form goes through the same loop as the brain's own proposal would.
 */
export const think: TurnStep<Answered, Thought> = async (t, d, next) => {
  if (t.answered) return next({ ...t, decision: t.answered, thought: null });
  const { ctx, item, modifying, proposed } = t;
  const input = { ctx, actor: t.prelude.actor, item, modifying };
  // A call the person changed in a form is checked as it is (Guardian, Gate, asked again), not thought up.
  const thought = proposed ? await d.proposals.runForm({ ...input, proposed }) : await d.proposals.think(input);
  return next({ ...t, decision: thought, thought });
};

/**
 * Step 11 — a reply the model wrote may say something was done only when a call with that effect ran in this
 * turn; otherwise it is written again from what really happened (issue 29; `ReplyComposer.honest`).
 */
export const keepReplyHonest: TurnStep<Thought> = async (t, d, next) =>
  next({ ...t, decision: await d.replies.honest(t.decision, t.ctx) });

/**
 * Step 12 — the Guardian's reply check (R-C4; `ReplyComposer.compose`): NG patterns and confidential words block
 * the reply (the persona's 「お答えできない」 instead), mention markup is neutralised, option labels are checked.
 */
export const checkReply: TurnStep<Thought> = async (t, d, next) =>
  next({ ...t, decision: d.replies.compose(t.decision, t.ctx.language) });
