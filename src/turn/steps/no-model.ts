import { personaMessage } from '../../core/messages';
import { decide, type TurnStep } from '../turn-state';

/** Step 6 — no model configured (no ANTHROPIC_API_KEY): a setup hint instead of thinking. */
export const noModel: TurnStep = (t, d) => {
  if (d.llmConfigured) return;
  decide(t, {
    kind: 'error',
    reasonCode: 'LLM_NOT_CONFIGURED',
    decider: 'SYSTEM',
    calls: [],
    error: { category: 'SYSTEM' },
    reply: { text: personaMessage(d.prompts, 'error.LLM_NOT_CONFIGURED', t.language) },
  });
};
