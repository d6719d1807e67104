import type { Thought, TurnStep } from '../turn-state';

/**
 * Step 12 — the Guardian's reply check (R-C4; `ReplyComposer.compose`): NG patterns and confidential words block
 * the reply (the persona's 「お答えできない」 instead), mention markup is neutralised, option labels are checked.
 */
export const checkReply: TurnStep<Thought> = async (t, d, next) =>
  next({ ...t, decision: d.replies.compose(t.decision, t.ctx.language) });
