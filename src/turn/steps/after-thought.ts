/*
 * Steps 13–15: what a thought leaves in the session — a question asked, clarification rounds counted, consecutive
 * errors counted. An answer to a pending confirmation (`thought` null) leaves nothing: these steps pass it on.
 */
import { personaMessage } from '../../core/messages';
import type { Thought, TurnStep } from '../turn-state';

/**
 * Step 13 — a CONFIRM (the Guardian's, or the Gate's `confirm`) stores a pending action and asks
 * 「実行してよいウル？」 with its options (`ConfirmationFlow.open`).
 */
export const askConfirmation: TurnStep<Thought> = async (t, d, next) => {
  // The brain stage's kind, not the checked one: a question the reply check blocked is recorded as not executed.
  if (t.thought?.kind !== 'confirm') return next(t);
  return next({ ...t, decision: await d.confirmations.open(t.decision, t.ctx.language) });
};

/**
 * Step 14 — R-S5: a question back counts a clarification round; after 3 rounds the reply suggests starting over,
 * after 4 the flow ends. Any other decision resets the count. An answer to a pending confirmation counts nothing.
 */
export const clarificationBudget: TurnStep<Thought> = async (t, d, next) => {
  const { decision, sessionKey: key } = t;
  const states = d.states;
  if (!t.thought) return next(t);
  if (decision.kind !== 'clarify') {
    if (t.session.clarificationRounds > 0) await states.resetClarification(key);
    return next(t);
  }
  const rounds = await states.bumpClarification(key);
  const step = clarificationStep(rounds);
  const lang = t.ctx.language;
  if (step === 'end_flow') {
    await states.resetClarification(key);
    const text = personaMessage(d.prompts, 'clarify.ended', lang);
    return next({
      ...t,
      decision: {
        ...decision,
        kind: 'ended',
        reasonCode: 'S_CLARIFICATION_LOOP_ENDED',
        decider: 'SYSTEM',
        reply: { text },
      },
    });
  }
  if (step === 'continue') return next(t);
  const text = `${decision.reply.text}\n${personaMessage(d.prompts, 'clarify.restart', lang)}`;
  return next({
    ...t,
    decision: {
      ...decision,
      reply: { ...decision.reply, text },
      notes: { ...decision.notes, clarificationRounds: rounds },
    },
  });
};

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

/** At this many clarification rounds the bot suggests starting over (seed 001 loop policy: hitl==3 → plan). */
export const SUGGEST_RESTART_AT = 3;

/** At this many clarification rounds the bot ends the flow (seed 001: hitl==4 → end recommended). */
export const END_FLOW_AT = 4;

/** What to do after `rounds` clarification rounds on the same request. Pure. */
export function clarificationStep(rounds: number): 'continue' | 'suggest_restart' | 'end_flow' {
  if (rounds >= END_FLOW_AT) return 'end_flow';
  if (rounds >= SUGGEST_RESTART_AT) return 'suggest_restart';
  return 'continue';
}
