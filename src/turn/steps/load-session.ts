import { personaMessage } from '../../core/messages';
import { asAppError } from '../../core/app-error';
import { decide, type Opened, type TurnStep, type WithSession } from '../turn-state';

/**
 * Step 7 — the session (pending confirmations), from what the first statement read: the state manager makes the
 * view of it, after expiry housekeeping when something in it can have expired. It is the one context source whose
 * failure stops the turn (R-X2): without it an answer could be misread, so nothing is executed and the person is
 * told.
 */
export const loadSession: TurnStep<Opened, WithSession> = async (t, d, next) => {
  const sessionKey = { platform: t.msg.platform, roomId: t.msg.roomId, accountId: t.msg.senderAccountId };
  let session;
  try {
    session = await d.states.getSession(sessionKey, t.prelude.session);
  } catch (err) {
    const app = asAppError(err, 'SESSION_STATE_UNAVAILABLE');
    t.log.error({ errorId: app.errorId, err: app.message }, 'session state unavailable; nothing executed');
    const text = personaMessage(d.prompts, 'error.SESSION_STATE_UNAVAILABLE', t.language, { errorId: app.errorId });
    return decide(t, {
      kind: 'error',
      reasonCode: 'SESSION_STATE_UNAVAILABLE',
      decider: 'SYSTEM',
      calls: [],
      reply: { text },
      error: { errorId: app.errorId, category: 'SYSTEM' },
    });
  }
  return next({ ...t, session, sessionKey });
};
