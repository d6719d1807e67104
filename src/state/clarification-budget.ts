/**
 * Clarification-loop budget (R-S5, seed 001 loop policy: hitl==3 → plan requested, hitl==4 → end
 * recommended). Pure.
 */

/** At this many clarification rounds the bot suggests starting over. */
export const SUGGEST_RESTART_AT = 3;

/** At this many clarification rounds the bot ends the flow. */
export const END_FLOW_AT = 4;

/** What to do after `rounds` clarification rounds on the same request. */
export type ClarificationStep = 'continue' | 'suggest_restart' | 'end_flow';

/** Maps a round count (as returned by `bumpClarification`) to the loop-policy step. */
export function clarificationStep(rounds: number): ClarificationStep {
  if (rounds >= END_FLOW_AT) return 'end_flow';
  if (rounds >= SUGGEST_RESTART_AT) return 'suggest_restart';
  return 'continue';
}
