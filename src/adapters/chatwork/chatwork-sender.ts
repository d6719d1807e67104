import { createHash } from 'node:crypto';
import type { ChatSender, FoundMessage, OutboundReply, SendResult } from '../../core/chat';
import { AppError } from '../../core/app-error';
import type { Logger } from '../../observability/logger';
import type { ChatworkClient } from './chatwork-client';
import { neutralizeForChatwork, stripChatworkMarkup } from './markup';

/** ChatWork's maximum message body length. */
export const CHATWORK_MAX_BODY_LENGTH = 65_535;

const ELLIPSIS = '…';

/** Slices without leaving half of a surrogate pair at the end. */
function safeSlice(text: string, length: number): string {
  const cut = text.slice(0, Math.max(0, length));
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/** Zero-width characters, two bits each: invisible in ChatWork, kept in the stored body. */
const MARK_SYMBOLS = ['\u200B', '\u200C', '\u200D', '\u2060'];

/**
 * An invisible mark of the outbox key (32 bits of its SHA-256 as 16 zero-width characters), written at the
 * start of the message text so that a later attempt can recognise its own message among the room's
 * messages ({@link ChatworkSender.findPosted}). Empty without a key.
 */
export function chatworkMarker(idempotencyKey: string | undefined): string {
  if (!idempotencyKey) return '';
  const bits = createHash('sha256').update(idempotencyKey).digest().readUInt32BE(0);
  let mark = '';
  for (let i = 30; i >= 0; i -= 2) mark += MARK_SYMBOLS[(bits >>> i) & 3];
  return mark;
}

/** How far ChatWork's clock may be behind ours when looking for our own earlier message. */
const CLOCK_SLACK_MS = 5 * 60_000;

/**
 * The reply tag for an answer: `[rp aid=… to=room-message]Name さん` (the tag is also the asker's
 * mention). Ids are checked so that nothing but the tag can be injected through them.
 */
function replyPrefix(reply: OutboundReply): string | undefined {
  const to = reply.inReplyTo;
  if (reply.kind === 'notice') {
    const ids = (reply.mentionAccountIds ?? []).filter((id) => /^\d+$/.test(id));
    const tags = `${reply.mentionAll ? '[toall]' : ''}${ids.map((id) => `[To:${id}]`).join('')}`;
    return tags ? `${tags}\n` : '';
  }
  if (!to) return '';
  if (!/^\d+$/.test(to.accountId) || !/^\d+$/.test(reply.roomId) || !/^[A-Za-z0-9_-]+$/.test(to.platformMessageId)) {
    return undefined;
  }
  const name = to.accountName ? `${neutralizeForChatwork(to.accountName)}さん` : '';
  return `[rp aid=${to.accountId} to=${reply.roomId}-${to.platformMessageId}]${name}\n`;
}

/**
 * Formats a reply as a ChatWork body: reply tag (answers only), neutralised text, and an info box
 * when a title or options are present. Truncates the text (not the closing tags) to 65 535 chars.
 *
 * @returns The body and whether a requested reply tag had to be dropped (malformed ids).
 */
export function formatChatworkBody(reply: OutboundReply): { body: string; droppedReplyTag: boolean } {
  const tag = replyPrefix(reply);
  const prefix = tag === undefined ? undefined : tag + chatworkMarker(reply.idempotencyKey);
  const title = reply.title ? neutralizeForChatwork(reply.title) : undefined;
  const options = (reply.options ?? []).map(
    (o) => `${neutralizeForChatwork(o.answer)}. ${neutralizeForChatwork(o.label)}`,
  );
  const boxed = title !== undefined || options.length > 0;
  const compose = (text: string): string => {
    if (!boxed) return (prefix ?? '') + text;
    const head = title !== undefined ? `[title]${title}[/title]` : '';
    const list = options.length > 0 ? `\n\n${options.join('\n')}` : '';
    return `${prefix ?? ''}[info]${head}${text}${list}[/info]`;
  };

  const text = neutralizeForChatwork(reply.text);
  let body = compose(text);
  if (body.length > CHATWORK_MAX_BODY_LENGTH) {
    const room = CHATWORK_MAX_BODY_LENGTH - compose('').length - ELLIPSIS.length;
    body =
      room > 0 ? compose(safeSlice(text, room) + ELLIPSIS) : safeSlice(body, CHATWORK_MAX_BODY_LENGTH - 1) + ELLIPSIS;
  }
  return { body, droppedReplyTag: tag === undefined };
}

/** Options of {@link ChatworkSender}. */
export interface ChatworkSenderOptions {
  client: Pick<ChatworkClient, 'postMessage' | 'getMessages'>;
  logger: Logger;
  /** The bot's own account id once known (`GET /me`): only its messages are considered its own. */
  botAccountId?: () => string | undefined;
}

/** The outbound half of the ChatWork adapter (R-A2): posts brain-approved replies and notices. */
export class ChatworkSender implements ChatSender {
  readonly platform = 'chatwork' as const;

  constructor(private readonly opts: ChatworkSenderOptions) {}

  /**
   * Posts one reply.
   *
   * @throws AppError `INTERNAL` for a reply meant for another platform; `EXTERNAL_API_FAILED` from the client.
   */
  async send(reply: OutboundReply): Promise<SendResult> {
    if (reply.platform !== 'chatwork') {
      throw new AppError('INTERNAL', `ChatworkSender cannot send a ${reply.platform} reply`);
    }
    const { body, droppedReplyTag } = formatChatworkBody(reply);
    if (droppedReplyTag) {
      this.opts.logger.warn({ roomId: reply.roomId }, 'chatwork.send.reply_tag_dropped_malformed_ids');
    }
    const { messageId } = await this.opts.client.postMessage(reply.roomId, body);
    this.opts.logger.info({ roomId: reply.roomId, messageId, kind: reply.kind ?? 'reply' }, 'chatwork.send.posted');
    return { platformMessageId: messageId };
  }

  /**
   * Finds this reply among the room's latest messages (`GET /rooms/{id}/messages?force=1`), posted by the
   * bot after `since`: by the invisible mark of its outbox key, or — for an answer, when the bot's account
   * is known — by its reply tag (one answer per message answered).
   */
  async findPosted(reply: OutboundReply, since: Date): Promise<FoundMessage | null> {
    const marker = chatworkMarker(reply.idempotencyKey);
    const bot = this.opts.botAccountId?.();
    const tag = reply.kind === 'notice' ? '' : (replyPrefix(reply) ?? '');
    const after = since.getTime() - CLOCK_SLACK_MS;
    const messages = await this.opts.client.getMessages(reply.roomId);
    for (const m of [...messages].reverse()) {
      if (m.sendTime * 1000 < after || (bot !== undefined && m.accountId !== bot)) continue;
      const marked = marker !== '' && m.body.includes(marker);
      const tagged = bot !== undefined && tag !== '' && m.body.startsWith(tag);
      if (marked || tagged) {
        const by = marked ? 'marker' : 'reply_tag';
        this.opts.logger.info({ roomId: reply.roomId, messageId: m.messageId, by }, 'chatwork.send.found_earlier_post');
        const text = stripChatworkMarkup(m.body).replace(/[\u200B-\u200D\u2060]/g, '');
        return { platformMessageId: m.messageId, text, sentAt: new Date(m.sendTime * 1000) };
      }
    }
    return null;
  }
}
