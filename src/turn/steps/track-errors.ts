import { need, type TurnStep } from '../turn-state';

/** Step 15 — consecutive errors move the session to ERROR_RECOVERY (state manager); a good turn clears them. */
export const trackErrors: TurnStep = async (t, d) => {
  const decision = need(t.decision, 'decision');
  const session = need(t.session, 'session');
  const key = need(t.sessionKey, 'sessionKey');
  if (decision.kind === 'error') await d.states.recordError(key, decision.reasonCode);
  else if (session.errorCount > 0 || session.mode === 'ERROR_RECOVERY') await d.states.recordSuccess(key);
};
