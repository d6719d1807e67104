import type { Answered, Thought, TurnStep } from '../turn-state';

/**
 * Step 10 — think: the brain proposes; each proposal goes through the Guardian, then the AuthorizationGate,
 * then the executor; results return to the brain until a final answer or the step budget
 * (`turn/proposal-stage.ts`). The decision it returns is checked and framed by the steps after it. A message that
 * answered a pending confirmation is not thought about: that answer is the decision.
 */
export const think: TurnStep<Answered, Thought> = async (t, d, next) => {
  if (t.answered) return next({ ...t, decision: t.answered, thought: null });
  const { ctx, item, modifying } = t;
  const thought = await d.proposals.think({ ctx, actor: t.prelude.actor, item, modifying });
  return next({ ...t, decision: thought, thought });
};
