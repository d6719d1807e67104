/**
 * The outbound half of the Discord adapter (R-A3): splits replies at 2,000 characters, replies to the
 * asker's message, and offers confirmations as buttons and as numbered text answers.
 */
import { createHash } from 'node:crypto';
import { ActionRowBuilder, ButtonBuilder, ButtonStyle } from 'discord.js';
import { AppError } from '../../core/app-error';
import type { Logger } from '../../observability/logger';
import type { ChatSender, ClosedQuestion, OutboundReply, ReplyOption, SendResult } from '../../core/chat';
import { summarizeError } from './error-summary';
import { DISCORD_MESSAGE_LIMIT, splitDiscordMessage } from './split-message';

/** What one `channel.send` carries (the subset of discord.js `MessageCreateOptions` we use). */
export interface DiscordSendPayload {
  content: string;
  /** Action rows as Discord API JSON. */
  components?: unknown[];
  /** Message to reply to (the first chunk of an answer). */
  replyToMessageId?: string;
  allowedMentions: unknown;
  /**
   * Discord's message nonce, enforced: a second send with the same nonce within a few minutes returns the
   * first message instead of posting again (a retried post of the same outbox key).
   */
  nonce?: string;
}

/** The nonce of chunk `index` of the message sent under an outbox key (≤ 25 characters, as Discord allows). */
export function discordNonce(idempotencyKey: string, index: number): string {
  return `${createHash('sha256').update(idempotencyKey).digest('base64url').slice(0, 20)}.${index}`;
}

/** The one channel operation the sender needs; injectable so tests need no network. */
export interface DiscordChannelPort {
  sendToChannel(channelId: string, payload: DiscordSendPayload): Promise<{ id: string }>;
  /** Edits a message: its content rewritten from the current one, its components removed. */
  editMessage?(channelId: string, messageId: string, content: (current: string) => string): Promise<void>;
  /** Posts a follow-up of an interaction (`POST /webhooks/{app}/{token}`); `flags` 64 = only the asker sees it. */
  followUp?(
    interaction: { applicationId: string; token: string },
    payload: Omit<DiscordSendPayload, 'replyToMessageId' | 'nonce'> & { flags: number },
  ): Promise<{ id: string }>;
}

/** Discord's message flag EPHEMERAL: only the person who used the interaction sees the message. */
export const EPHEMERAL = 64;

/** Custom ids our buttons carry and the gateway accepts (anything else is forged or stale). */
export const BUTTON_KEY_PATTERN = /^h1:[A-Za-z0-9_-]{1,90}$/;

/** Custom ids of the 「変更する」 buttons and of the forms they open (ReplyOption.edit). */
export const FORM_KEY_PATTERN = /^hf:[A-Za-z0-9_-]{1,90}$/;

const MAX_LABEL = 80;
const MAX_BUTTONS_PER_ROW = 5;
const MAX_ROWS = 5;

function buttonStyle(style: ReplyOption['style']): ButtonStyle {
  if (style === 'primary') return ButtonStyle.Primary;
  if (style === 'danger') return ButtonStyle.Danger;
  return ButtonStyle.Secondary;
}

/** "1. 承認 / 2. キャンセル" — so a typed answer works where buttons do not. */
export function formatOptionsText(options: readonly ReplyOption[]): string {
  return options.map((o) => `${o.answer}. ${o.label}`).join(' / ');
}

/**
 * Builds the button rows for reply options as Discord API JSON. Options without a key, or whose key
 * is not in our {@link BUTTON_KEY_PATTERN} format, get no button (their text answer still works); an option's
 * `edit` adds a 「変更する」 button ({@link FORM_KEY_PATTERN});
 * duplicate keys are dropped; labels are cut to 80 characters; at most 5 rows of 5.
 *
 * @param options - The reply's options.
 * @returns Action rows (empty when no option has a usable key).
 */
export function buildButtonRows(options: readonly ReplyOption[]): unknown[] {
  const seen = new Set<string>();
  const buttons: ButtonBuilder[] = [];
  for (const option of options) {
    const key = option.key;
    if (!key || !BUTTON_KEY_PATTERN.test(key) || seen.has(key)) continue;
    seen.add(key);
    const label = (option.label.trim() || option.answer).slice(0, MAX_LABEL);
    buttons.push(new ButtonBuilder().setCustomId(key).setLabel(label).setStyle(buttonStyle(option.style)));
  }
  // 「変更する」 after the answers: it opens a form with the values (the gateway shows it; the core checks it).
  for (const edit of options.flatMap((o) => (o.edit ? [o.edit] : []))) {
    if (!FORM_KEY_PATTERN.test(edit.key) || seen.has(edit.key)) continue;
    seen.add(edit.key);
    const label = edit.label.trim().slice(0, MAX_LABEL) || 'Edit';
    buttons.push(new ButtonBuilder().setCustomId(edit.key).setLabel(label).setStyle(ButtonStyle.Secondary));
  }
  const rows: unknown[] = [];
  for (let i = 0; i < buttons.length && rows.length < MAX_ROWS; i += MAX_BUTTONS_PER_ROW) {
    rows.push(new ActionRowBuilder<ButtonBuilder>().addComponents(buttons.slice(i, i + MAX_BUTTONS_PER_ROW)).toJSON());
  }
  return rows;
}

/** The full text of a reply before splitting: bold title, body, numbered options. */
function composeText(reply: OutboundReply): string {
  const parts: string[] = [];
  if (reply.title?.trim()) parts.push(`**${reply.title.trim()}**`);
  if (reply.text.trim()) parts.push(reply.text);
  if (reply.options && reply.options.length > 0) parts.push(formatOptionsText(reply.options));
  return parts.join('\n\n');
}

/**
 * Sends {@link OutboundReply} values to Discord. Long text is split (the first chunk replies to
 * `inReplyTo.platformMessageId` unless the reply is a notice); option buttons go on the last chunk.
 * A failure part-way throws after earlier chunks were posted.
 */
export class DiscordSender implements ChatSender {
  readonly platform = 'discord' as const;

  /**
   * @param port - Posts one message to a channel.
   * @param logger - Optional; logs ids only.
   */
  constructor(
    private readonly port: DiscordChannelPort,
    private readonly logger?: Logger,
  ) {}

  /**
   * Posts the reply.
   *
   * @param reply - A reply for a Discord channel (`platform` must be 'discord').
   * @returns The id of the last message posted (none when there was nothing to post).
   * @throws AppError EXTERNAL_API_FAILED when Discord rejects a message; VALIDATION_FAILED for a
   *   reply of another platform.
   */
  async send(reply: OutboundReply): Promise<SendResult> {
    if (reply.platform !== 'discord') {
      throw new AppError('VALIDATION_FAILED', `DiscordSender got a reply for platform ${reply.platform}`);
    }
    const chunks = splitDiscordMessage(composeText(reply));
    if (chunks.length === 0) {
      this.logger?.warn({ roomId: reply.roomId }, 'discord reply with nothing to send');
      return {};
    }
    const rows = buildButtonRows(reply.options ?? []);
    const replyTo = reply.kind === 'notice' ? undefined : reply.inReplyTo?.platformMessageId;
    const via = reply.interaction;
    let lastId: string | undefined;
    for (const [index, content] of chunks.entries()) {
      const payload: DiscordSendPayload = { content, allowedMentions: { parse: [], repliedUser: true } };
      if (index === chunks.length - 1 && rows.length > 0) payload.components = rows;
      try {
        if (via) {
          // The answer to a command (or to a private question) goes back through its interaction, never in the
          // channel: a private one stays private (fails rather than posting where others see it).
          if (!this.port.followUp) throw new Error('this Discord connection cannot answer interactions');
          const flags = via.private ? EPHEMERAL : 0;
          lastId = (await this.port.followUp(via, { ...payload, flags })).id;
          continue;
        }
        if (reply.idempotencyKey) payload.nonce = discordNonce(reply.idempotencyKey, index);
        if (index === 0 && replyTo) payload.replyToMessageId = replyTo;
        lastId = (await this.port.sendToChannel(reply.roomId, payload)).id;
      } catch (err) {
        this.logger?.error(
          { roomId: reply.roomId, chunk: index, chunks: chunks.length, error: summarizeError(err) },
          'discord send failed',
        );
        throw new AppError('EXTERNAL_API_FAILED', `discord send failed (chunk ${index + 1}/${chunks.length})`, {
          cause: err,
        });
      }
    }
    this.logger?.debug(
      { roomId: reply.roomId, messageId: lastId, chunks: chunks.length, buttons: rows.length > 0 },
      'discord reply sent',
    );
    return { platformMessageId: lastId };
  }

  /**
   * A decided confirmation: its question loses its buttons and its options line, and says what happened.
   *
   * @throws whatever the edit throws (the caller logs it; the buttons then answer with the truth when clicked).
   */
  async closeQuestion(q: ClosedQuestion): Promise<void> {
    if (!q.platformMessageId || !this.port.editMessage) return;
    const optionsLine = q.options.length > 0 ? formatOptionsText(q.options) : null;
    await this.port.editMessage(q.roomId, q.platformMessageId, (current) => {
      const body = optionsLine && current.endsWith(optionsLine) ? current.slice(0, -optionsLine.length) : current;
      const note = `**${q.note}**`;
      return `${body.trimEnd().slice(0, DISCORD_MESSAGE_LIMIT - note.length - 2)}\n\n${note}`;
    });
  }
}
