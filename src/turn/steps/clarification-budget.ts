import { personaMessage } from '../../core/messages';
import type { Thought, TurnStep } from '../turn-state';

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
