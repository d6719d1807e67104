import type { DiscordMessageLike, DiscordUserLike } from '../../../src/adapters/discord/to-inbound';

export const BOT_ID = '111111111111111111';
export const ALICE_ID = '222222222222222222';
export const BOB_ID = '333333333333333333';
export const OTHER_BOT_ID = '444444444444444444';
export const GUILD_ID = '900000000000000000';
export const CHANNEL_ID = '800000000000000000';

export const BOT: DiscordUserLike = { id: BOT_ID, bot: true, username: 'hisho', globalName: 'Hisho' };
export const ALICE: DiscordUserLike = { id: ALICE_ID, bot: false, username: 'alice', globalName: 'Alice A' };
export const BOB: DiscordUserLike = { id: BOB_ID, bot: false, username: 'bob', globalName: null };

/**
 * A plain object shaped like a discord.js Message. `mentioned` are the users Discord lists as mentioned
 * (for a reply ping that includes the replied-to author even without `<@id>` in the content).
 */
export function fakeMessage(
  over: Partial<DiscordMessageLike> & {
    mentioned?: DiscordUserLike[];
    repliedUserId?: string;
    everyone?: boolean;
    nicknames?: Record<string, string>;
  } = {},
): DiscordMessageLike {
  const { mentioned = [], repliedUserId, everyone = false, nicknames, ...rest } = over;
  const guildId = rest.guildId === undefined ? GUILD_ID : rest.guildId;
  return {
    id: '700000000000000001',
    content: '',
    channelId: CHANNEL_ID,
    author: ALICE,
    member: guildId ? { displayName: 'アリス' } : null,
    createdTimestamp: Date.UTC(2026, 10, 20, 1, 2, 3),
    reference: repliedUserId ? { messageId: '700000000000000000' } : null,
    system: false,
    ...rest,
    guildId,
    mentions: {
      users: new Map(mentioned.map((u) => [u.id, u])),
      members: guildId
        ? new Map(Object.entries(nicknames ?? {}).map(([id, displayName]) => [id, { displayName }]))
        : null,
      everyone,
      repliedUser: repliedUserId ? { id: repliedUserId } : null,
    },
  };
}
