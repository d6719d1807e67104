import { deliveryRecord } from '../../queue/outbox';
import { replyTo } from '../../core/chat';
import { need, type TurnStep } from '../turn-state';

/**
 * Deliver (always runs once the turn is decided) — posts the reply through the outbox (once, across crashes and
 * time-outs), unless it is silent or the service is in shadow mode. It is marked sent by `record`, the turn's last
 * statement (until then a retry looks for it in the room before posting again); a reply an earlier attempt posted
 * (`earlierAnswer`) is not posted again.
 */
export const deliver: TurnStep = async (t, d) => {
  const decision = need(t.decision, 'decision');
  const text = t.prefix ? `${t.prefix}\n${decision.reply.text}` : decision.reply.text;
  t.replyText = text;
  t.sent = null;
  t.posted = null;
  if (d.shadowMode || decision.silent) return;
  if (t.foundEarlier) {
    t.sent = t.foundEarlier;
    return;
  }
  const reply = { ...replyTo(t.msg, text), title: decision.reply.title, options: decision.reply.options };
  // Posted on the take made by the turn's first statement, if it made one; otherwise `deliver` takes the row.
  const res = await d.outbox.deliver(t.replyKey, reply, t.item, { markLater: true, ahead: t.taken });
  t.sent = res;
  t.posted = deliveryRecord(t.replyKey, text, res, res.postedAt);
};
