import { personaMessage } from '../../core/messages';
import { decide, type Opened, type TurnStep } from '../turn-state';

/**
 * Step 5 — a stranger (not in the directory, in a DM or an unlisted room; `authorization/actor.ts`) is told
 * that the bot serves members (issue 8). No model, no context.
 */
export const stranger: TurnStep<Opened> = async (t, d, next) => {
  if (t.prelude.actor.source !== 'stranger') return next(t);
  d.metrics.strangerTurns.inc({ platform: t.msg.platform });
  return decide(t, {
    kind: 'refused',
    reasonCode: 'Z_STRANGER',
    decider: 'SYSTEM',
    calls: [],
    reply: { text: personaMessage(d.prompts, 'reply.stranger', t.language) },
    auth: { result: 'DENIED', reasonCode: 'Z_STRANGER' },
  });
};
