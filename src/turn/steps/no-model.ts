import { personaMessage } from '../../core/messages';
import { decide, type Opened, type TurnStep } from '../turn-state';

/** Step 6 — no model configured (no ANTHROPIC_API_KEY): a setup hint instead of thinking. */
export const noModel: TurnStep<Opened> = async (t, d, next) => {
  if (d.llmConfigured) return next(t);
  return decide(t, {
    kind: 'error',
    reasonCode: 'LLM_NOT_CONFIGURED',
    decider: 'SYSTEM',
    calls: [],
    error: { category: 'SYSTEM' },
    reply: { text: personaMessage(d.prompts, 'error.LLM_NOT_CONFIGURED', t.language) },
  });
};
