/*
 * Steps 4–6: turns said without the model (no context read): a sender over budget, a stranger, no model configured.
 */
import { personaMessage } from '../../core/messages';
import { decide, type Opened, type TurnStep } from '../turn-state';

/**
 * Step 4 — a sender over a per-sender budget (issue 8; the use was read by the first statement): the polite
 * reply once per window, then silence. No model, no context.
 */
export const senderBudget: TurnStep<Opened> = async (t, d, next) => {
  const { budget } = t.prelude;
  if (budget.ok) return next(t);
  d.metrics.senderBudgetRefusals.inc({ limit: budget.limit });
  const key = budget.limit === 'minute' ? 'reply.sender_budget_minute' : 'reply.sender_budget_day';
  return decide(t, {
    kind: 'refused',
    reasonCode: budget.reasonCode,
    decider: 'SYSTEM',
    calls: [],
    reply: { text: personaMessage(d.prompts, key, t.language) },
    silent: !budget.notify,
    notes: { notified: budget.notify },
  });
};

/**
 * Step 5 — a stranger (not in the directory, in a DM or an unlisted room; `authorization/actor.ts`) is told
 * that the bot serves members (issue 8). No model, no context.
 */
export const stranger: TurnStep<Opened> = async (t, d, next) => {
  if (t.prelude.actor.source !== 'stranger') return next(t);
  d.metrics.strangerTurns.inc({ platform: t.msg.platform });
  return decide(t, {
    kind: 'refused',
    reasonCode: 'Z_STRANGER',
    decider: 'SYSTEM',
    calls: [],
    reply: { text: personaMessage(d.prompts, 'reply.stranger', t.language) },
    auth: { result: 'DENIED', reasonCode: 'Z_STRANGER' },
  });
};

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
