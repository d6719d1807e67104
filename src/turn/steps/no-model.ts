import { personaMessage } from '../../core/messages';
import { decide, type TurnStep } from '../turn-state';

/**
 * Step 6 — no model configured (no ANTHROPIC_API_KEY): the AI is not available (the administrator was alerted at
 * start); on the local console, whoever types is the operator: what to set.
 */
export const noModel: TurnStep = (t, d) => {
  if (d.llmConfigured) return;
  const key = t.msg.platform === 'console' ? 'console.no_llm' : 'error.LLM_NOT_CONFIGURED';
  decide(t, {
    kind: 'error',
    reasonCode: 'LLM_NOT_CONFIGURED',
    decider: 'SYSTEM',
    calls: [],
    error: { category: 'SYSTEM' },
    reply: { text: personaMessage(d.prompts, key, t.language), own: true },
  });
};
