/**
 * The platform-neutral message types (R-A1). The core never imports a platform SDK: adapters translate
 * platform payloads into these, and send replies described by these.
 */

export type Platform = 'chatwork' | 'discord' | 'console';

/** One message addressed to the bot, as every stage after the adapter sees it. */
export interface InboundMessage {
  platform: Platform;
  /** Organisation id, resolved by the adapter from the room (or the default organisation). */
  orgId: string;
  /** Platform room / channel id (DM channels included), as a string. */
  roomId: string;
  /** Sender's platform account id, as a string. */
  senderAccountId: string;
  /** Sender's display name when the platform gives one (not trusted for authority). */
  senderName?: string;
  /** Text with platform markup stripped (what the LLM sees). */
  text: string;
  /** Original text with markup (kept for the adapter's own use, never sent to the LLM). */
  rawText: string;
  /**
   * The person's own words for deterministic parsing (confirmation answers): `text` without the mention
   * tags and the addressee names written after them (ChatWork's TO button: `[To:9999]Hishoさん`), Discord
   * mentions, or quotes. Absent → `text`. The LLM always sees `text`.
   */
  answerText?: string;
  /** Account ids mentioned in the message. */
  mentions: string[];
  /** Platform message id this message replies to, if any. */
  replyTo?: string;
  /** Platform message id (the dedupe key together with platform and room). */
  platformMessageId: string;
  /** When the platform says the message was sent (ISO 8601). */
  sentAt: string;
  /** True when the room is a direct message with the bot. */
  isDirect?: boolean;
  /**
   * The adapter's reading of the room's authority when the room is not in the directory (e.g. an
   * unlisted Discord guild channel is public, R-A5). The directory's room entry always wins.
   */
  roomAuthority?: 'member' | 'public';
  /** Set for a button click: the pending action the click answers (a stale click must not approve a newer one). */
  answerTo?: string;
  /** Set for a button click: the confirmation round whose question carried the button (0 first, 1 second). */
  answerRound?: number;
  /**
   * Set for a form submission (Discord's 「変更する」): the pending action `answerTo` with the values the person
   * wrote. It is a change request like a typed one: proposed again, checked again, asked again.
   */
  edit?: { parameters: Record<string, unknown> };
  /**
   * Set when the message came as a platform interaction whose answers go back through it (a Discord command, a
   * click on a private question): the replies are its follow-ups, visible to the asker only when `private`.
   */
  interaction?: ReplyInteraction;
}

/**
 * An interaction the replies to a message are sent through (Discord: `POST /webhooks/{app}/{token}` within
 * 15 minutes). The token is a short-lived credential: never logged, never shown to the model.
 */
export interface ReplyInteraction {
  applicationId: string;
  token: string;
  /** Only the asker sees the answers (Discord: ephemeral, flags 64). */
  private: boolean;
}

/** A choice offered with a reply (confirmation buttons on Discord/console, numbered on ChatWork). */
export interface ReplyOption {
  /** What the user may answer in text to pick it ("1", "2"). */
  answer: string;
  label: string;
  /** Opaque key for buttons (≤ 100 chars). */
  key?: string;
  style?: 'primary' | 'danger' | 'secondary';
  /**
   * Where the platform has forms (Discord): a button beside this option that opens a form to change what it
   * answers (the pending action's values). Platforms without forms ignore it.
   */
  edit?: { key: string; label: string };
}

/** A reply the brain has produced or approved (R-C4). */
export interface OutboundReply {
  platform: Platform;
  roomId: string;
  /** Plain text; the adapter adds platform markup (reply tags, mentions, info blocks). */
  text: string;
  /** The message being answered (for ChatWork reply tags / Discord message replies). */
  inReplyTo?: { platformMessageId: string; accountId: string; accountName?: string };
  /** A title shown above the text where the platform has one (ChatWork [info][title]). */
  title?: string;
  options?: ReplyOption[];
  /** Proactive notice (no reply tag) rather than an answer. */
  kind?: 'reply' | 'notice';
  /** Platform accounts a notice mentions (added by the adapter; never taken from model text). */
  mentionAccountIds?: string[];
  /** A notice to the whole room ([toall] on ChatWork); set only by a confirmed handler, never by model text. */
  mentionAll?: boolean;
  /** Sent through this interaction (see {@link InboundMessage.interaction}) rather than posted in the room. */
  interaction?: ReplyInteraction;
  /**
   * The outbox key this message is sent under (set by the outbox). An adapter may carry an invisible mark
   * of it in the message, so that {@link ChatSender.findPosted} can recognise the message later.
   */
  idempotencyKey?: string;
}

export interface SendResult {
  platformMessageId?: string;
}

/** A message found among the room's recent messages by {@link ChatSender.findPosted}. */
export interface FoundMessage extends SendResult {
  /** Its text without markup (for the conversation history). */
  text?: string;
  /** When the platform says it was posted. */
  sentAt?: Date;
}

/** The outbound half of an adapter. */
export interface ChatSender {
  readonly platform: Platform;
  /**
   * Posts one message. An `AppError` with `uncertain: true` means it may have been posted anyway (a timeout
   * or a 5xx after the request went out): the outbox then reconciles instead of posting again.
   */
  send(reply: OutboundReply): Promise<SendResult>;
  /**
   * Looks among the room's recent messages for this reply posted by an earlier attempt (after `since`):
   * how a crash between posting and recording, or an uncertain post, is reconciled. Platforms without it
   * are posted again in that case.
   */
  findPosted?(reply: OutboundReply, since: Date): Promise<FoundMessage | null>;
  /**
   * A confirmation was decided: its question's buttons go (Discord: the message is edited, its components
   * removed, `note` added; console: open pages are told). Platforms without buttons have none.
   */
  closeQuestion?(q: ClosedQuestion): Promise<void>;
}

/** A posted question whose confirmation was decided. */
export interface ClosedQuestion {
  roomId: string;
  /** The platform's id of the message that carries the buttons (null when unknown). */
  platformMessageId: string | null;
  /** The options it was posted with (their text line goes with the buttons). */
  options: readonly ReplyOption[];
  /** What happened (「✅ 実行済み」…), written where the buttons were. */
  note: string;
}

/** The answer to `msg`: threaded to it, mentioning the asker. */
export function replyTo(msg: InboundMessage, text: string): OutboundReply {
  const reply: OutboundReply = {
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
  if (msg.interaction) reply.interaction = msg.interaction;
  return reply;
}
