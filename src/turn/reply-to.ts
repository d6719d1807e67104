import type { InboundMessage, OutboundReply } from '../adapters/types';

/** The answer to `msg`: threaded to it, mentioning the asker. */
export function replyTo(msg: InboundMessage, text: string): OutboundReply {
  return {
    platform: msg.platform,
    roomId: msg.roomId,
    text,
    kind: 'reply',
    inReplyTo: {
      platformMessageId: msg.platformMessageId,
      accountId: msg.senderAccountId,
      accountName: msg.senderName,
    },
  };
}
