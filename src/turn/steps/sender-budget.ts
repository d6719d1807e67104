import { personaMessage } from '../../core/messages';
import { decide, need, type TurnStep } from '../turn-state';

/**
 * Step 4 — a sender over a per-sender budget (issue 8; the use was read by the first statement): the polite
 * reply once per window, then silence. No model, no context.
 */
export const senderBudget: TurnStep = (t, d) => {
  const { budget } = need(t.prelude, 'prelude');
  if (budget.ok) return;
  d.metrics.senderBudgetRefusals.inc({ limit: budget.limit });
  const key = budget.limit === 'minute' ? 'reply.sender_budget_minute' : 'reply.sender_budget_day';
  decide(t, {
    kind: 'refused',
    reasonCode: budget.reasonCode,
    decider: 'SYSTEM',
    calls: [],
    reply: { text: personaMessage(d.prompts, key, t.language) },
    silent: !budget.notify,
    notes: { notified: budget.notify },
  });
};
