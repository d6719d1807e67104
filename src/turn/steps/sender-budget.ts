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
