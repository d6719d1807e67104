import type { Thought, TurnStep } from '../turn-state';

/**
 * Step 11 — a reply the model wrote may say something was done only when a call with that effect ran in this
 * turn; otherwise it is written again from what really happened (issue 29; `ReplyComposer.honest`).
 */
export const keepReplyHonest: TurnStep<Thought> = async (t, d, next) =>
  next({ ...t, decision: await d.replies.honest(t.decision, t.ctx) });
