import { mayHavePosted } from '../../queue/outbox';
import { replyTo } from '../../core/chat';
import { decide, type Opened, type TurnStep } from '../turn-state';

/**
 * Step 3 — an earlier attempt may have posted the answer (a crash between posting and recording it, or a post
 * that timed out): it is looked for in the room before thinking, let alone posting, again. Found, the turn is
 * recorded as delivered earlier and nothing is posted.
 */
export const earlierAnswer: TurnStep<Opened> = async (t, d, next) => {
  const { prior } = t.prelude;
  if (!mayHavePosted(prior)) return next(t);
  const found = await d.outbox.reconcile(t.replyKey, replyTo(t.msg, ''), prior!.createdAt);
  if (!found) return next(t);
  t.log.warn({ platformMessageId: found.platformMessageId }, 'earlier answer found in the room: not posted');
  const decided = decide(t, {
    kind: 'delivered_earlier',
    reasonCode: 'O_RECONCILED',
    decider: 'SYSTEM',
    calls: [],
    reply: { text: found.text ?? '' },
  });
  return { ...decided, foundEarlier: found };
};
