/**
 * Translating a Discord message into the platform-neutral {@link InboundMessage} (R-A1, R-A3), and the
 * strict "is this addressed to the bot?" rule (PLATFORMS.md B2). Pure: no discord.js import, so tests
 * pass plain objects; a discord.js `Message` satisfies {@link DiscordMessageLike} structurally.
 */
import type { InboundMessage } from '../../core/chat';

/** The user fields we read (a discord.js `User` fits). */
export interface DiscordUserLike {
  id: string;
  bot: boolean;
  username: string;
  globalName?: string | null;
}

/** The mention fields we read (a discord.js `MessageMentions` fits). */
export interface DiscordMentionsLike {
  /** Users mentioned, including the author of the replied-to message when the reply pings. */
  users: ReadonlyMap<string, { id: string; username: string; globalName?: string | null }>;
  /** Guild members mentioned (for nicknames); null in DMs. */
  members?: ReadonlyMap<string, { displayName: string }> | null;
  /** `@everyone` / `@here` — never counts as addressing the bot. */
  everyone?: boolean;
  /** Author of the replied-to message, when the message is a reply. */
  repliedUser?: { id: string } | null;
}

/** The message fields we read (a discord.js `Message` fits). */
export interface DiscordMessageLike {
  id: string;
  content: string;
  channelId: string;
  /** null for DMs. */
  guildId: string | null;
  author: DiscordUserLike;
  /** The author as a guild member (nickname), when in a guild. */
  member?: { displayName: string } | null;
  mentions: DiscordMentionsLike;
  /** Set on replies (type 0) and forwards (type 1); discord.js's `MessageReference`. */
  reference?: { messageId?: string | null; type?: number } | null;
  createdTimestamp: number;
  /** System messages (joins, pins…) are never addressed to the bot. */
  system?: boolean;
}

/** How the gateway resolved the room (R-A5). */
export interface DiscordRoomContext {
  orgId: string;
  authority: 'member' | 'public';
}

/** Options for {@link isAddressedToBot} and {@link toInbound}. */
export interface AddressingOptions {
  /** The bot's own user id. */
  botUserId: string;
}

/** Options for {@link toInbound}. */
export interface ToInboundOptions extends AddressingOptions {
  room: DiscordRoomContext;
}

const USER_MENTION = /<@!?(\d{15,25})>/g;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function mentionPattern(userId: string): RegExp {
  return new RegExp(`<@!?${escapeRegExp(userId)}>`);
}

/** Ids written as `<@id>` / `<@!id>` in the content, in order, without repeats. */
function explicitMentionIds(content: string): string[] {
  const ids: string[] = [];
  for (const m of content.matchAll(USER_MENTION)) {
    const id = m[1];
    if (id !== undefined && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

/**
 * Discord's reply gesture: the message replies (reference type 0, not a forward) to one of the bot's own
 * messages. `mentions.repliedUser` is the replied-to message's author (discord.js reads it from
 * `referenced_message`), whether or not the reply pings: with the ping Discord lists the bot in `mentions`,
 * without it (the person turned it off, `allowed_mentions.replied_user` false) it does not — both count.
 */
export function repliesToBot(message: DiscordMessageLike, botUserId: string): boolean {
  const ref = message.reference;
  if (!ref?.messageId || (ref.type !== undefined && ref.type !== 0)) return false;
  return message.mentions.repliedUser?.id === botUserId;
}

/**
 * Whether the bot should respond to this message at all: never to itself, other bots, webhooks or system
 * messages; always in DMs; in guilds when it replies to one of the bot's messages (Discord's reply gesture,
 * see {@link repliesToBot}) or mentions the bot strictly — `<@bot>` written in the text; `@everyone`/`@here`
 * and role mentions never count.
 *
 * @param message - The Discord message.
 * @param opts - The bot's user id.
 * @returns True when the message is addressed to the bot.
 */
export function isAddressedToBot(message: DiscordMessageLike, opts: AddressingOptions): boolean {
  const { botUserId } = opts;
  if (message.author.id === botUserId || message.author.bot || message.system === true) return false;
  if (message.guildId === null) return true;
  if (repliesToBot(message, botUserId)) return true;
  return message.mentions.users.has(botUserId) && mentionPattern(botUserId).test(message.content);
}

/** `@name` for a mentioned user: guild nickname, then global display name, then username. */
function displayNameOf(mentions: DiscordMentionsLike, id: string): string | undefined {
  const member = mentions.members?.get(id);
  if (member?.displayName) return member.displayName;
  const user = mentions.users.get(id);
  return user ? user.globalName || user.username : undefined;
}

/**
 * Strips Discord user-mention markup for the LLM: the bot's own `<@id>`/`<@!id>` is removed, other
 * resolvable user mentions become `@name`; unresolvable ones are left as written. Trimmed.
 *
 * @param content - Raw message content.
 * @param mentions - The message's mentions (for names).
 * @param botUserId - The bot's user id.
 * @returns Plain text.
 */
export function stripDiscordMentions(content: string, mentions: DiscordMentionsLike, botUserId: string): string {
  const ownMention = new RegExp(`[ \\t]*<@!?${escapeRegExp(botUserId)}>[ \\t]*`, 'g');
  return content
    .replace(ownMention, (match: string, offset: number, whole: string) => {
      // Keep one space between words ("a <@bot> b" → "a b"), none at a line's start or end.
      const before = offset === 0 ? '\n' : whole.charAt(offset - 1);
      const after = offset + match.length >= whole.length ? '\n' : whole.charAt(offset + match.length);
      return before === '\n' || after === '\n' || after === '\r' ? '' : ' ';
    })
    .replace(USER_MENTION, (whole: string, id: string) => {
      const name = displayNameOf(mentions, id);
      return name ? `@${name}` : whole;
    })
    .trim();
}

/** The person's own words for answer parsing: every user, role and channel mention removed. */
export function discordAnswerText(content: string): string {
  return content
    .replace(/<(?:@[!&]?|#)\d{15,25}>/g, ' ')
    .replace(/@(?:everyone|here)\b/g, ' ')
    .replace(/[ \t]+/g, ' ')
    .trim();
}

/**
 * Translates a Discord message into an {@link InboundMessage}, or null when the bot should not respond
 * (see {@link isAddressedToBot}) or the message has no text at all (attachment- or sticker-only).
 * `room.authority` travels as `roomAuthority` (the directory entry, when the room has one, wins in the core).
 *
 * @param message - The Discord message (a discord.js `Message` or a plain object of the same shape).
 * @param opts - Bot user id and the resolved room.
 * @returns The inbound message, or null to ignore.
 */
export function toInbound(message: DiscordMessageLike, opts: ToInboundOptions): InboundMessage | null {
  if (!isAddressedToBot(message, opts)) return null;
  if (message.content.trim() === '') return null;
  const isDirect = message.guildId === null;
  const mentionIds = explicitMentionIds(message.content).filter((id) => message.mentions.users.has(id));
  const senderName = message.member?.displayName || message.author.globalName || message.author.username;
  const replyTo = message.reference?.messageId ?? undefined;
  const inbound: InboundMessage = {
    platform: 'discord',
    orgId: opts.room.orgId,
    roomId: message.channelId,
    senderAccountId: message.author.id,
    text: stripDiscordMentions(message.content, message.mentions, opts.botUserId),
    rawText: message.content,
    answerText: discordAnswerText(message.content),
    mentions: mentionIds,
    platformMessageId: message.id,
    sentAt: new Date(message.createdTimestamp).toISOString(),
    isDirect,
    roomAuthority: opts.room.authority,
  };
  if (senderName) inbound.senderName = senderName;
  if (replyTo) inbound.replyTo = replyTo;
  return inbound;
}
