import type { Thought, TurnStep } from '../turn-state';

/**
 * Step 15 — consecutive errors move the session to ERROR_RECOVERY (`confirmations/sessions.ts`); a good turn clears
 * them. An answer to a pending confirmation counts nothing.
 */
export const trackErrors: TurnStep<Thought> = async (t, d, next) => {
  const { decision, session, sessionKey: key } = t;
  if (!t.thought) return next(t);
  if (decision.kind === 'error') await d.states.recordError(key, decision.reasonCode);
  else if (session.errorCount > 0 || session.mode === 'ERROR_RECOVERY') await d.states.recordSuccess(key);
  return next(t);
};
