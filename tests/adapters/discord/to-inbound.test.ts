import { isAddressedToBot, stripDiscordMentions, toInbound } from '../../../src/adapters/discord/to-inbound';
import { ALICE, ALICE_ID, BOB, BOB_ID, BOT, BOT_ID, CHANNEL_ID, OTHER_BOT_ID, fakeMessage } from './fakes';

const room = { orgId: 'org-1', authority: 'member' as const };
const opts = { botUserId: BOT_ID, room };

describe('toInbound: the answer text has no mentions at all', () => {
  it.each([
    [`<@${BOT_ID}> はい`, 'はい'],
    [`<@!${BOT_ID}>\nはい`, 'はい'],
    [`<@${BOT_ID}> <@${BOB_ID}> いいえ`, 'いいえ'],
    [`<@${BOT_ID}> はい <@&123456789012345678> @here`, 'はい'],
  ])('%j → %j (the LLM text keeps the other names)', (content, expected) => {
    const inbound = toInbound(fakeMessage({ content, mentioned: [BOT, BOB] }), opts);
    expect(inbound?.answerText).toBe(expected);
  });
});

describe('toInbound', () => {
  it('translates a DM without any mention', () => {
    const msg = fakeMessage({ guildId: null, content: '  明日の予定は？ ' });
    expect(toInbound(msg, opts)).toEqual({
      platform: 'discord',
      orgId: 'org-1',
      roomId: CHANNEL_ID,
      senderAccountId: ALICE_ID,
      senderName: 'Alice A',
      text: '明日の予定は？',
      rawText: '  明日の予定は？ ',
      answerText: '明日の予定は？',
      mentions: [],
      platformMessageId: '700000000000000001',
      sentAt: '2026-11-20T01:02:03.000Z',
      isDirect: true,
      roomAuthority: opts.room.authority,
    });
  });

  it('accepts a strict mention in a guild channel and strips it', () => {
    const msg = fakeMessage({ content: `<@${BOT_ID}> 今日のタスクを教えて`, mentioned: [BOT] });
    const inbound = toInbound(msg, opts);
    expect(inbound).toMatchObject({
      text: '今日のタスクを教えて',
      isDirect: false,
      senderName: 'アリス',
      mentions: [BOT_ID],
    });
    expect(inbound?.rawText).toBe(`<@${BOT_ID}> 今日のタスクを教えて`);
  });

  it('accepts the legacy <@!id> form and keeps words apart where the mention was', () => {
    const msg = fakeMessage({ content: `ねえ <@!${BOT_ID}> 教えて\n<@${BOT_ID}>\n次の行`, mentioned: [BOT] });
    expect(toInbound(msg, opts)?.text).toBe('ねえ 教えて\n\n次の行');
  });

  it('ignores guild messages that do not mention the bot', () => {
    expect(toInbound(fakeMessage({ content: 'ただの雑談' }), opts)).toBeNull();
  });

  it('ignores @everyone / @here', () => {
    const msg = fakeMessage({ content: '@everyone 会議です', everyone: true });
    expect(toInbound(msg, opts)).toBeNull();
    expect(toInbound(fakeMessage({ content: '@here 会議です', everyone: true }), opts)).toBeNull();
  });

  it('ignores role mentions (even a role the bot holds)', () => {
    const msg = fakeMessage({ content: '<@&555555555555555555> 確認お願いします' });
    expect(toInbound(msg, opts)).toBeNull();
  });

  it("counts Discord's reply gesture to the bot's message as addressing it, with or without the ping", () => {
    const pinged = fakeMessage({ content: 'はい', mentioned: [BOT], repliedUserId: BOT_ID });
    expect(toInbound(pinged, opts)).toMatchObject({ text: 'はい', answerText: 'はい', replyTo: '700000000000000000' });
    const silent = fakeMessage({ content: 'はい', repliedUserId: BOT_ID });
    expect(toInbound(silent, opts)).toMatchObject({ text: 'はい', replyTo: '700000000000000000', mentions: [] });
  });

  it("ignores replies to other people's messages, forwards of the bot's messages and replies by bots", () => {
    expect(toInbound(fakeMessage({ content: 'はい', repliedUserId: BOB_ID }), opts)).toBeNull();
    const forward = fakeMessage({ content: 'はい', repliedUserId: BOT_ID });
    expect(toInbound({ ...forward, reference: { messageId: '700000000000000000', type: 1 } }, opts)).toBeNull();
    const otherBot = { id: OTHER_BOT_ID, bot: true, username: 'otherbot' };
    expect(toInbound(fakeMessage({ author: otherBot, content: 'はい', repliedUserId: BOT_ID }), opts)).toBeNull();
  });

  it('a reply ping to someone else is not a mention of the bot', () => {
    expect(toInbound(fakeMessage({ content: 'はい', mentioned: [BOB], repliedUserId: BOB_ID }), opts)).toBeNull();
  });

  it('accepts a reply to the bot that also mentions it explicitly', () => {
    const msg = fakeMessage({ content: `<@${BOT_ID}> それでお願い`, mentioned: [BOT], repliedUserId: BOT_ID });
    expect(toInbound(msg, opts)).toMatchObject({ text: 'それでお願い', replyTo: '700000000000000000' });
  });

  it('ignores messages from other bots, even in DMs', () => {
    const otherBot = { id: OTHER_BOT_ID, bot: true, username: 'otherbot' };
    expect(toInbound(fakeMessage({ author: otherBot, content: `<@${BOT_ID}> hi`, mentioned: [BOT] }), opts)).toBeNull();
    expect(toInbound(fakeMessage({ author: otherBot, guildId: null, content: 'hi' }), opts)).toBeNull();
  });

  it('ignores its own messages', () => {
    expect(toInbound(fakeMessage({ author: { ...BOT, bot: false }, guildId: null, content: 'echo' }), opts)).toBeNull();
    expect(toInbound(fakeMessage({ author: BOT, content: `<@${BOT_ID}> echo`, mentioned: [BOT] }), opts)).toBeNull();
  });

  it('ignores system messages and messages without text', () => {
    expect(toInbound(fakeMessage({ guildId: null, content: 'pinned', system: true }), opts)).toBeNull();
    expect(toInbound(fakeMessage({ guildId: null, content: '' }), opts)).toBeNull();
  });

  it('turns other user mentions into @name and lists mentioned ids', () => {
    const msg = fakeMessage({
      content: `<@${BOT_ID}> <@${BOB_ID}> と <@!${ALICE_ID}> に共有して。<@999999999999999999> も`,
      mentioned: [BOT, BOB, ALICE],
      nicknames: { [ALICE_ID]: 'アリス' },
    });
    const inbound = toInbound(msg, opts);
    expect(inbound?.text).toBe('@bob と @アリス に共有して。<@999999999999999999> も');
    expect(inbound?.mentions).toEqual([BOT_ID, BOB_ID, ALICE_ID]);
  });

  it('uses the given organisation and reply reference', () => {
    const msg = fakeMessage({ guildId: null, content: 'hi', reference: { messageId: '123456789012345678' } });
    expect(toInbound(msg, { botUserId: BOT_ID, room: { orgId: 'org-9', authority: 'public' } })).toMatchObject({
      orgId: 'org-9',
      replyTo: '123456789012345678',
    });
  });
});

describe('isAddressedToBot / stripDiscordMentions', () => {
  it('does not treat a mention of someone else as addressing the bot', () => {
    expect(isAddressedToBot(fakeMessage({ content: `<@${BOB_ID}> hi`, mentioned: [BOB] }), { botUserId: BOT_ID })).toBe(
      false,
    );
  });

  it('leaves code indentation alone', () => {
    const users = new Map([
      [BOT_ID, BOT],
      [ALICE_ID, ALICE],
    ]);
    expect(stripDiscordMentions(`<@${BOT_ID}>\n\`\`\`\n  indented\n\`\`\``, { users }, BOT_ID)).toBe(
      '```\n  indented\n```',
    );
  });
});
