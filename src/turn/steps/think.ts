import { need, type TurnStep } from '../turn-state';

/**
 * Step 10 — think: the brain proposes; each proposal goes through the Guardian, then the AuthorizationGate,
 * then the executor; results return to the brain until a final answer or the step budget
 * (`turn/proposal-stage.ts`). The decision it returns is checked and framed by the steps after it.
 */
export const think: TurnStep = async (t, d) => {
  const ctx = need(t.ctx, 'ctx');
  const actor = need(t.prelude, 'prelude').actor;
  t.thought = await d.proposals.think({ ctx, actor, item: t.item, modifying: t.modifying });
  t.decision = t.thought;
};
