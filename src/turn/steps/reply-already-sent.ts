import { need, type TurnStep } from '../turn-state';

/** Step 2 — a retry after a crash that happened after the reply went out: nothing more to do (not even record). */
export const replyAlreadySent: TurnStep = (t) => {
  if (need(t.prelude, 'prelude').alreadySent) t.finished = true;
};
