/*
 * What always follows a decision (`AFTER_DECISION`): the reply is posted, then the turn's last statement records it.
 */
import { replyTo, type InboundMessage } from '../../core/chat';
import { deliveryRecord } from '../../queue/outbox';
import { turnAudit } from '../turn-audit';
import { DECISION_LABELS, type TurnDecision } from '../turn-decision';
import { nowOf, type AfterDecision, type Decided, type Replied, type TurnDeps } from '../turn-state';

/**
 * Deliver (always runs once the turn is decided) — posts the reply through the outbox (once, across crashes and
 * time-outs), unless it is silent or the service is in shadow mode. It is marked sent by `record`, the turn's last
 * statement (until then a retry looks for it in the room before posting again); a reply an earlier attempt posted
 * (`earlierAnswer`) is not posted again.
 */
export const deliver: AfterDecision<Decided, Replied> = async (t, d, next) => {
  const { decision } = t;
  const replyText = t.prefix ? `${t.prefix}\n${decision.reply.text}` : decision.reply.text;
  if (d.shadowMode || decision.silent) return next({ ...t, replyText, sent: null, posted: null });
  if (t.foundEarlier) return next({ ...t, replyText, sent: t.foundEarlier, posted: null });
  const reply = { ...replyTo(t.msg, replyText), title: decision.reply.title, options: decision.reply.options };
  // Posted on the take made by the turn's first statement, if it made one; otherwise `deliver` takes the row.
  const res = await d.outbox.deliver(t.replyKey, reply, t.item, { markLater: true, heldUntil: t.heldUntil });
  return next({ ...t, replyText, sent: res, posted: deliveryRecord(t.replyKey, replyText, res, res.postedAt) });
};

/**
 * Record (always runs once the turn is decided) — one statement marks the reply sent, stores the bot's message in
 * the history, the turn record and its LLM usage, enqueues a summary or a self-critique when due, and completes
 * the work item (`TurnStore.close`).
 */
export const record: AfterDecision<Replied, never> = async (t, d) => {
  const { msg, item, decision, replyText: text } = t;
  const turn = d.recorder.prepare(
    turnAudit(decision, {
      id: t.turnId,
      orgId: msg.orgId,
      platform: msg.platform,
      roomId: msg.roomId,
      accountId: msg.senderAccountId,
      memberId: t.prelude.actor.memberId,
      workItemId: item.id,
      input: msg.text,
      finalReply: text,
      totalMs: performance.now() - t.started,
      shadow: d.shadowMode,
    }),
  );
  const history = decision.silent ? null : { text, options: decision.reply.options, at: nowOf(d) };
  const summarize = decision.brain?.model !== undefined && decision.brain.model !== null;
  const critique = sampleCritique(d, t.turnId, msg, decision);
  const enqueue = critique ? [critique] : [];
  const { sent, posted } = t;
  const outcome = await d.store.close({ msg, sent, history, turn, item, posted, summarize, enqueue });
  if (outcome.summaryEnqueued) d.onSummaryEnqueued?.();
  if (outcome.enqueued > 0) d.critic?.enqueued();
  turn.observe();
  const ms = Math.round(performance.now() - t.started);
  t.log.info({ decision: DECISION_LABELS[decision.kind], reasonCode: decision.reasonCode, ms }, 'turn done');
  return { completed: outcome.completed };
};

/**
 * The self-critique sampling looks at the decision after it was made (R-B6); a sampled turn's critique item is
 * stored with the turn record and runs later as background work, so it can neither delay nor change the reply.
 */
function sampleCritique(d: TurnDeps, turnId: string, msg: InboundMessage, decision: TurnDecision) {
  if (!d.critic) return null;
  const overall = decision.brain?.confidence?.overall;
  return d.critic.sample({
    id: turnId,
    orgId: msg.orgId,
    model: decision.brain?.model ?? null,
    confidence: typeof overall === 'number' ? overall : null,
    tools: (decision.proposals ?? []).map((p) => p.tool),
  });
}
