import { need, type TurnStep } from '../turn-state';

/**
 * Step 13 — a CONFIRM (the Guardian's, or the Gate's `confirm`) stores a pending action and asks
 * 「実行してよいウル？」 with its options (`ConfirmationFlow.open`).
 */
export const askConfirmation: TurnStep = async (t, d) => {
  // The brain stage's kind, not the checked one: a question the reply check blocked is recorded as not executed.
  if (need(t.thought, 'thought').kind !== 'confirm') return;
  t.decision = await d.confirmations.open(need(t.decision, 'decision'), need(t.ctx, 'ctx').language);
};
