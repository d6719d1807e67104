import { deliveryRecord } from '../../queue/outbox';
import { replyTo } from '../../core/chat';
import type { AfterDecision, Decided, Replied } from '../turn-state';

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
  const res = await d.outbox.deliver(t.replyKey, reply, t.item, { markLater: true, ahead: t.taken });
  return next({ ...t, replyText, sent: res, posted: deliveryRecord(t.replyKey, replyText, res, res.postedAt) });
};
