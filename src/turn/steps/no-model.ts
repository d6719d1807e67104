import { personaMessage } from '../../core/messages';
import { decide, type Opened, type TurnStep } from '../turn-state';

/**
 * Step 6 — no model configured (no ANTHROPIC_API_KEY): the AI is not available (the administrator was alerted at
 * start); on the local console, whoever types is the operator: what to set.
 */
export const noModel: TurnStep<Opened> = async (t, d, next) => {
  if (d.llmConfigured) return next(t);
  const key = t.msg.platform === 'console' ? 'console.no_llm' : 'error.LLM_NOT_CONFIGURED';
  return decide(t, {
    kind: 'error',
    reasonCode: 'LLM_NOT_CONFIGURED',
    decider: 'SYSTEM',
    calls: [],
    error: { category: 'SYSTEM' },
    reply: { text: personaMessage(d.prompts, key, t.language), own: true },
  });
};
