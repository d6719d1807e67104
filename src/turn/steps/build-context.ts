import type { InboundMessage } from '../../core/chat';
import { audienceOf, type Actor } from '../../authorization';
import type { ContextBuilder, ContextPrefetch } from '../../context/context-builder';
import type { SenderProfile, TurnContext } from '../../context/types';
import type { TurnPrelude } from '../turn-store';
import { nowOf, type TurnStep, type WithContext, type WithSession } from '../turn-state';

/**
 * Step 8 — the context: history, summary, profile, persons, tasks, goals, memories, knowledge, as quoted data
 * (`context/`), using the read `openTurn` started beside the first statement when it was for this actor.
 */
export const buildContext: TurnStep<WithSession, WithContext> = async (t, d, next) => {
  const ctx = await turnContext(d.contextBuilder, {
    msg: t.msg,
    actor: t.prelude.actor,
    profile: t.prelude.profile,
    now: nowOf(d),
    prefetched: await t.prefetch,
  });
  return next({ ...t, ctx });
};

/**
 * A turn's context for the brain: the sender as the brain sees them, the room, the audience the actor's room and
 * level give. The one place it is put together, for the service and the evaluation set (`eval/`).
 */
export function turnContext(
  builder: Pick<ContextBuilder, 'build'>,
  t: {
    msg: InboundMessage;
    actor: Actor;
    profile: TurnPrelude['profile'];
    now: Date;
    prefetched?: ContextPrefetch | null;
  },
): Promise<TurnContext> {
  const { msg, actor } = t;
  const sender = senderProfile(msg, actor, t.profile);
  const room = { platform: msg.platform, roomId: msg.roomId, name: null, authority: actor.roomAuthority };
  return builder.build({ msg, sender, room, audience: audienceOf(actor), now: t.now, prefetched: t.prefetched });
}

/** The sender as the brain sees them: directory facts for members, the platform's name otherwise. */
export function senderProfile(msg: InboundMessage, actor: Actor, details: TurnPrelude['profile']): SenderProfile {
  const known = actor.memberId ? details : null;
  return {
    known: actor.known,
    memberId: actor.memberId,
    name: actor.name ?? msg.senderName ?? `user ${msg.senderAccountId}`,
    level: actor.level,
    departmentId: actor.departmentId,
    departmentName: known?.departmentName ?? null,
    title: known?.title ?? null,
    preferences: known?.preferences ?? {},
  };
}
