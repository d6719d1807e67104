/*
 * Steps 1–3: the turn's first statement, and what a retry finds there (its reply already sent, or perhaps posted).
 */
import type { ContextPrefetch } from '../../context/context-builder';
import { replyTo, type InboundMessage } from '../../core/chat';
import { mayHavePosted } from '../../queue/outbox';
import { decide, FINISHED, nowOf, type Opened, type Started, type TurnDeps, type TurnStep } from '../turn-state';

/**
 * Step 1 — open the turn: one statement reserves the reply's outbox row (and, outside shadow mode, takes it for the
 * turn's claim: decision 0012), stores the user message and reads the sender, room, session and per-sender budget
 * use (`TurnStore.open`; decision 0013). The context read starts beside it ({@link prefetchContext}; decision 0009).
 */
export const openTurn: TurnStep<Started, Opened> = async (t, d, next) => {
  // The first statement takes the reply's outbox row for this claim as it reserves it (not in shadow mode,
  // which posts nothing): the post needs no take of its own while that claim has the margin left.
  const take = d.shadowMode ? undefined : t.item;
  const prefetch = prefetchContext(d, t.msg, t.item.attempts === 1);
  const sentAt = d.outbox.clock();
  const prelude = await d.store.open(t.msg, t.replyKey, { defaultLevel: d.defaultUserLevel, now: nowOf(d), take });
  return next({ ...t, prelude, prefetch, heldUntil: d.outbox.takenAt(sentAt, prelude.takenLeftMs) });
};
/**
 * The context read of a first attempt starts beside the turn's first statement, for the member the cached
 * directory names (`ContextBuilder.prefetch`); the context uses it only if the actor that statement reads is
 * that member. Retries (which may find their reply already sent) and a service without a model (which reads no
 * context) do not start one. Never rejects.
 */
function prefetchContext(d: TurnDeps, msg: InboundMessage, firstAttempt: boolean): Promise<ContextPrefetch | null> {
  if (!firstAttempt || !d.llmConfigured) return Promise.resolve(null);
  return d.contextBuilder.prefetch(msg).catch(() => null);
}

/** Step 2 — a retry after a crash that happened after the reply went out: nothing more to do (not even record). */
export const replyAlreadySent: TurnStep<Opened> = async (t, _d, next) => (t.prelude.alreadySent ? FINISHED : next(t));

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
