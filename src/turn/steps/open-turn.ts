import type { ContextPrefetch } from '../../context/context-builder';
import type { InboundMessage } from '../../core/chat';
import { nowOf, type Opened, type Started, type TurnDeps, type TurnStep } from '../turn-state';

/**
 * Step 1 — open the turn: one statement confirms the claim, reserves (and, outside shadow mode, takes) the
 * reply's outbox row, stores the user message and reads the sender, room, session and per-sender budget use
 * (`TurnStore.open`). The context read starts beside it ({@link prefetchContext}; decision 0009).
 */
export const openTurn: TurnStep<Started, Opened> = async (t, d, next) => {
  // The first statement takes the reply's outbox row for this claim as it reserves it (not in shadow mode,
  // which posts nothing): the post needs no take of its own while that claim has the margin left.
  const take = d.shadowMode ? undefined : t.item;
  const prefetch = prefetchContext(d, t.msg, t.item.attempts === 1);
  const sentAt = d.outbox.clock();
  const prelude = await d.store.open(t.msg, t.replyKey, { defaultLevel: d.defaultUserLevel, now: nowOf(d), take });
  return next({ ...t, prelude, prefetch, taken: d.outbox.takenAt(sentAt, prelude.takenLeftMs) });
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
