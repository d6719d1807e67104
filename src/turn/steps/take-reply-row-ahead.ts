import type { TurnStep } from '../turn-state';

/**
 * Step 9 — PERFORMANCE DEVICE (issue 10): the reply's outbox row, unless the first statement took it, is taken
 * while the turn thinks (or runs the action a 「はい」 approved), so the post does not wait for that round trip
 * (`Outbox.takeAhead`). Not in shadow mode, which posts nothing. `deliver` posts on it.
 */
export const takeReplyRowAhead: TurnStep = (t, d) => {
  if (d.shadowMode) return;
  t.ahead = t.taken ?? d.outbox.takeAhead(t.replyKey, t.item);
};
