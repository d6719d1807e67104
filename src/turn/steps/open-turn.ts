import type { InboundMessage } from '../../core/chat';
import type { ContextPrefetch } from '../../context/context-builder';
import type { SqlParams } from '../../db/sql';
import { messageDedupeKey } from '../../intake/intake';
import { replyKeyOf, type ClaimedItem } from '../../intake/work-queue';
import type { TurnPrelude } from '../../state/turn-store';
import { nowOf, type TurnDeps, type TurnStep } from '../turn-state';

/**
 * Step 1 — open the turn: one statement confirms the claim, reserves (and, outside shadow mode, takes) the
 * reply's outbox row, stores the user message and reads the sender, room, session and per-sender budget use
 * (`TurnStore.open`). The context read starts beside it ({@link prefetchContext}).
 *
 * PERFORMANCE DEVICE — the folded claim (issue 10; kept until the lead decides on it after a bench): when the
 * worker pool was woken for a named message, {@link claimNamed} claims the item *inside* this same first
 * statement (one round trip instead of two) and hands what that statement read over to this step through the
 * `opened` WeakMap below. Without it this step is just `TurnStore.open`.
 */
export const openTurn: TurnStep = async (t, d) => {
  const early = opened.get(t.item);
  opened.delete(t.item);
  // The first statement takes the reply's outbox row for this claim as it reserves it (not in shadow mode,
  // which posts nothing): the post needs no take of its own while that claim has the margin left.
  const take = d.shadowMode ? undefined : t.item;
  const opts = { defaultLevel: d.defaultUserLevel, now: early?.now ?? nowOf(d), take };
  t.prefetch = early?.prefetch ?? prefetchContext(d, t.msg, t.item.attempts === 1);
  const sentAt = early?.sentAt ?? d.outbox.clock();
  t.prelude = early?.prelude ?? (await d.store.open(t.msg, t.replyKey, opts));
  t.taken = d.outbox.takenAt(sentAt, t.prelude.takenLeftMs);
};

/** Items claimed by their turn's first statement ({@link claimNamed}): what that statement read, for the turn. */
const opened = new WeakMap<
  ClaimedItem,
  { prelude: TurnPrelude; prefetch: Promise<ContextPrefetch | null>; now: Date; sentAt: number }
>();

/**
 * Claims the user request a wake-up named, with the stored message it carried, in the turn's first statement
 * (the worker pool's `claimNamed`; see the performance device above). `claim` writes the claim's CTE
 * (`WorkQueue.claimByIdCte`); the reply key and the message are written only if it took the item. The context
 * read starts beside it, as on every first attempt. Null when the item could not be claimed (taken by another
 * worker, or waiting behind an older item): nothing was written, and the pool claims as usual.
 */
export async function claimNamed(
  d: TurnDeps,
  msg: InboundMessage,
  claim: (p: SqlParams, name: string) => string,
): Promise<ClaimedItem | null> {
  const now = nowOf(d);
  const prefetch = prefetchContext(d, msg, true);
  const replyKey = replyKeyOf({ dedupeKey: messageDedupeKey(msg) });
  const sentAt = d.outbox.clock();
  const take = !d.shadowMode;
  const result = await d.store.claimAndOpen(msg, replyKey, { defaultLevel: d.defaultUserLevel, now, take }, claim);
  if (!result) return null;
  // Only the intake stores user requests, under this key; should one ever differ, the turn opens again under its own.
  if (replyKeyOf(result.item) === replyKey) opened.set(result.item, { prelude: result.prelude, prefetch, now, sentAt });
  return result.item;
}

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
