import type { Thought, TurnStep } from '../turn-state';

/**
 * Step 13 — a CONFIRM (the Guardian's, or the Gate's `confirm`) stores a pending action and asks
 * 「実行してよいウル？」 with its options (`ConfirmationFlow.open`).
 */
export const askConfirmation: TurnStep<Thought> = async (t, d, next) => {
  // The brain stage's kind, not the checked one: a question the reply check blocked is recorded as not executed.
  if (t.thought?.kind !== 'confirm') return next(t);
  return next({ ...t, decision: await d.confirmations.open(t.decision, t.ctx.language) });
};
