import { FINISHED, type Opened, type TurnStep } from '../turn-state';

/** Step 2 — a retry after a crash that happened after the reply went out: nothing more to do (not even record). */
export const replyAlreadySent: TurnStep<Opened> = async (t, _d, next) => (t.prelude.alreadySent ? FINISHED : next(t));
