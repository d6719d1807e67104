import { Writable } from 'node:stream';
import pino from 'pino';
import { Client, Events, GatewayIntentBits, Message, MessageFlags, Partials } from 'discord.js';
import {
  DiscordGateway,
  gatewayIntents,
  type ButtonClick,
  type ButtonInteractionLike,
  type ButtonOutcome,
  type DiscordGatewayOptions,
} from '../../../src/adapters/discord/discord-gateway';
import type { InboundMessage } from '../../../src/core/chat';
import { ALICE_ID, BOT, BOT_ID, CHANNEL_ID, GUILD_ID, fakeMessage } from './fakes';

/** A logger whose JSON lines are kept for assertions. */
function captureLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines, text: () => lines.join('\n') };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

/** A fake ButtonInteraction that records calls, in order. */
function fakeButton(customId: string, over: Partial<ButtonInteractionLike> = {}) {
  const calls: string[] = [];
  const args: Record<string, unknown[]> = {};
  const record = (name: string) =>
    jest.fn(async (...a: unknown[]) => {
      calls.push(name);
      args[name] = a;
      return undefined;
    });
  const interaction = {
    id: '600000000000000001',
    customId,
    channelId: CHANNEL_ID,
    user: { id: ALICE_ID },
    isButton: () => true,
    deferUpdate: record('deferUpdate'),
    reply: record('reply'),
    followUp: record('followUp'),
    editReply: record('editReply'),
    ...over,
  };
  return { interaction, calls, args };
}

describe('DiscordGateway', () => {
  let client: Client;
  let log: ReturnType<typeof captureLogger>;
  let accepted: InboundMessage[];
  let onButton: jest.Mock<Promise<ButtonOutcome>, [ButtonClick]>;
  let resolveRoom: jest.Mock<
    ReturnType<DiscordGatewayOptions['resolveRoom']>,
    Parameters<DiscordGatewayOptions['resolveRoom']>
  >;
  let defaultOrg: string | undefined;
  let gateway: DiscordGateway;

  function makeGateway(over: Partial<DiscordGatewayOptions> = {}): DiscordGateway {
    return new DiscordGateway({
      token: 'test-token',
      intake: {
        accept: async (msg) => {
          accepted.push(msg);
          return { status: 'accepted' };
        },
      },
      resolveRoom,
      defaultOrgId: () => defaultOrg,
      onButton,
      logger: log.logger,
      client,
      ...over,
    });
  }

  beforeEach(() => {
    client = new Client({ intents: [] });
    (client as unknown as { user: unknown }).user = { id: BOT_ID };
    log = captureLogger();
    accepted = [];
    defaultOrg = 'org-default';
    resolveRoom = jest.fn(async (channelId: string, _guildId: string | null) =>
      channelId === CHANNEL_ID ? { orgId: 'org-1', authority: 'member' as const } : null,
    );
    onButton = jest.fn(async (_click: ButtonClick): Promise<ButtonOutcome> => ({ status: 'accepted' }));
    gateway = makeGateway();
  });

  afterEach(async () => {
    await gateway.stop();
  });

  describe('messages', () => {
    it('takes a strict mention emitted as messageCreate into intake, logging ids only', async () => {
      const content = `<@${BOT_ID}> 秘密の相談です`;
      client.emit(Events.MessageCreate, fakeMessage({ content, mentioned: [BOT] }) as never);
      await flush();
      expect(accepted).toHaveLength(1);
      expect(accepted[0]).toMatchObject({
        platform: 'discord',
        orgId: 'org-1',
        roomId: CHANNEL_ID,
        text: '秘密の相談です',
      });
      expect(resolveRoom).toHaveBeenCalledWith(CHANNEL_ID, GUILD_ID);
      expect(log.text()).toContain('discord message taken in');
      expect(log.text()).not.toContain('秘密');
    });

    it('does not look up the room for messages not addressed to the bot', async () => {
      await gateway.handleMessage(fakeMessage({ content: '@everyone 雑談', everyone: true }));
      await gateway.handleMessage(fakeMessage({ content: 'ありがとう', repliedUserId: ALICE_ID }));
      expect(resolveRoom).not.toHaveBeenCalled();
      expect(accepted).toHaveLength(0);
    });

    it("takes in a reply to the bot's message (the reply gesture), pinged or not", async () => {
      await gateway.handleMessage(fakeMessage({ content: 'ありがとう', mentioned: [BOT], repliedUserId: BOT_ID }));
      await gateway.handleMessage(fakeMessage({ id: '700000000000000002', content: 'はい', repliedUserId: BOT_ID }));
      expect(accepted.map((m) => m.text)).toEqual(['ありがとう', 'はい']);
    });

    it(
      'DMs belong to the default organisation; an unlisted channel ' +
        'only counts in an allow-listed guild, as public',
      async () => {
        await gateway.stop();
        gateway = makeGateway({ resolveGuild: async (guildId) => (guildId === GUILD_ID ? 'org-guild' : null) });
        const dm = fakeMessage({ guildId: null, channelId: '810000000000000000', content: 'hi' });
        const guild = fakeMessage({ channelId: '820000000000000000', content: `<@${BOT_ID}> hi`, mentioned: [BOT] });
        const foreign = fakeMessage({
          guildId: '910000000000000000',
          channelId: '840000000000000000',
          content: `<@${BOT_ID}> hi`,
          mentioned: [BOT],
        });
        await expect(gateway.roomFor(dm)).resolves.toEqual({ orgId: 'org-default', authority: 'member' });
        await expect(gateway.roomFor(guild)).resolves.toEqual({ orgId: 'org-guild', authority: 'public' });
        await expect(gateway.roomFor(foreign)).resolves.toBeNull();
        await gateway.handleMessage(dm);
        await gateway.handleMessage(guild);
        await gateway.handleMessage(foreign);
        expect(accepted.map((m) => [m.orgId, m.roomId, m.isDirect])).toEqual([
          ['org-default', '810000000000000000', true],
          ['org-guild', '820000000000000000', false],
        ]);
        expect(log.text()).toContain('not allow-listed');
      },
    );

    it('ignores every unlisted guild channel when no guild is allow-listed (fail-closed)', async () => {
      await gateway.handleMessage(
        fakeMessage({ channelId: '820000000000000000', content: `<@${BOT_ID}> hi`, mentioned: [BOT] }),
      );
      expect(accepted).toHaveLength(0);
    });

    it("resolves a thread through its parent channel's directory entry", async () => {
      const msg = {
        ...fakeMessage({ channelId: '830000000000000000', content: `<@${BOT_ID}> hi`, mentioned: [BOT] }),
        channel: { isThread: () => true, parentId: CHANNEL_ID },
      };
      await gateway.handleMessage(msg);
      expect(accepted[0]).toMatchObject({ orgId: 'org-1', roomId: '830000000000000000' });
    });

    it('drops messages when there is no organisation at all', async () => {
      defaultOrg = undefined;
      await gateway.handleMessage(fakeMessage({ guildId: null, channelId: '810000000000000000', content: 'hi' }));
      expect(accepted).toHaveLength(0);
      expect(log.text()).toContain('no organisation');
    });

    it('ignores messages before the client is ready', async () => {
      (client as unknown as { user: unknown }).user = null;
      await gateway.handleMessage(fakeMessage({ guildId: null, content: 'hi' }));
      expect(accepted).toHaveLength(0);
    });

    it('logs intake and directory failures without throwing', async () => {
      await gateway.stop();
      gateway = makeGateway({ intake: { accept: async () => Promise.reject(new Error('db down')) } });
      await expect(gateway.handleMessage(fakeMessage({ guildId: null, content: 'hi' }))).resolves.toBeUndefined();
      resolveRoom.mockRejectedValueOnce(new Error('directory down'));
      await expect(
        gateway.handleMessage(fakeMessage({ content: `<@${BOT_ID}> x`, mentioned: [BOT] })),
      ).resolves.toBeUndefined();
      expect(log.lines.filter((l) => l.includes('discord message handling failed'))).toHaveLength(2);
    });

    it('reads a real discord.js Message built from gateway data (reply ping vs explicit mention)', async () => {
      const botUser = {
        id: BOT_ID,
        username: 'hisho',
        discriminator: '0',
        global_name: 'Hisho',
        avatar: null,
        bot: true,
      };
      const alice = { id: ALICE_ID, username: 'alice', discriminator: '0', global_name: 'Alice A', avatar: null };
      const raw = (id: string, content: string) => ({
        id,
        channel_id: CHANNEL_ID,
        guild_id: GUILD_ID,
        author: alice,
        content,
        timestamp: '2026-11-20T01:02:03.000Z',
        edited_timestamp: null,
        tts: false,
        mention_everyone: false,
        mentions: [botUser],
        mention_roles: [],
        attachments: [],
        embeds: [],
        pinned: false,
        type: 19,
        message_reference: { message_id: '700000000000000000', channel_id: CHANNEL_ID, guild_id: GUILD_ID },
        referenced_message: {
          id: '700000000000000000',
          channel_id: CHANNEL_ID,
          author: botUser,
          content: 'prev',
          timestamp: '2026-11-20T01:00:00.000Z',
          mentions: [],
          mention_roles: [],
          attachments: [],
          embeds: [],
          type: 0,
        },
      });
      const make = (data: unknown) => Reflect.construct(Message, [client, data]) as Message;
      await gateway.handleMessage(make(raw('700000000000000010', 'ありがとう')));
      expect(accepted).toHaveLength(1); // a reply to the bot's message (ping only): the reply gesture
      expect(accepted[0]).toMatchObject({ text: 'ありがとう', replyTo: '700000000000000000' });
      await gateway.handleMessage(make(raw('700000000000000011', `<@${BOT_ID}> 続きをお願い`)));
      expect(accepted).toHaveLength(2);
      expect(accepted[1]).toMatchObject({
        text: '続きをお願い',
        replyTo: '700000000000000000',
        senderName: 'Alice A',
        platformMessageId: '700000000000000011',
      });
    });
  });

  describe('buttons', () => {
    it('defers first, then calls onButton, then removes the buttons when accepted', async () => {
      const { interaction, calls } = fakeButton('h1:cf_abc-1');
      onButton.mockImplementation(async () => {
        calls.push('onButton');
        return { status: 'accepted' };
      });
      await gateway.handleButton(interaction);
      expect(calls).toEqual(['deferUpdate', 'onButton', 'editReply']);
      expect(onButton).toHaveBeenCalledWith({
        roomId: CHANNEL_ID,
        accountId: ALICE_ID,
        key: 'h1:cf_abc-1',
        interactionId: '600000000000000001',
      });
    });

    it('acknowledges before a slow onButton finishes', async () => {
      let finish!: (o: ButtonOutcome) => void;
      onButton.mockImplementation(() => new Promise<ButtonOutcome>((resolve) => (finish = resolve)));
      const { interaction, calls } = fakeButton('h1:slow');
      const done = gateway.handleButton(interaction);
      await flush();
      expect(calls).toEqual(['deferUpdate']);
      finish({ status: 'accepted' });
      await done;
      expect(calls).toEqual(['deferUpdate', 'editReply']);
    });

    it('answers a forged id with an ephemeral note and does not call onButton', async () => {
      for (const id of ['approve', 'h1:', 'h1:has space', `h1:${'a'.repeat(91)}`, 'h2:abc']) {
        const { interaction, calls, args } = fakeButton(id);
        await gateway.handleButton(interaction);
        expect(calls).toEqual(['reply']);
        expect(args.reply).toEqual([{ content: 'このボタンは使えません', flags: MessageFlags.Ephemeral }]);
      }
      expect(onButton).not.toHaveBeenCalled();
      expect(log.lines.filter((l) => l.includes('forged or stale button id'))).toHaveLength(5);
    });

    it('tells a different clicker ephemerally that the confirmation is not theirs', async () => {
      onButton.mockResolvedValue({ status: 'not_yours' });
      const { interaction, calls, args } = fakeButton('h1:cf_abc-1');
      await gateway.handleButton(interaction);
      expect(calls).toEqual(['deferUpdate', 'followUp']);
      expect(args.followUp).toEqual([
        { content: 'この確認は依頼した方だけが操作できます。', flags: MessageFlags.Ephemeral },
      ]);
    });

    it('uses the default expired note, removes stale buttons, and prefers a given note', async () => {
      onButton.mockResolvedValueOnce({ status: 'expired' });
      const first = fakeButton('h1:old');
      await gateway.handleButton(first.interaction);
      expect(first.calls).toEqual(['deferUpdate', 'editReply', 'followUp']);
      expect(first.args.followUp).toEqual([
        { content: 'この確認は期限切れです。もう一度お願いしてください。', flags: MessageFlags.Ephemeral },
      ]);

      onButton.mockResolvedValueOnce({ status: 'invalid', note: 'この操作はできません。' });
      const second = fakeButton('h1:bad');
      await gateway.handleButton(second.interaction);
      expect(second.calls).toEqual(['deferUpdate', 'followUp']);
      expect(second.args.followUp).toEqual([{ content: 'この操作はできません。', flags: MessageFlags.Ephemeral }]);
    });

    it('reports an onButton failure ephemerally without throwing', async () => {
      onButton.mockRejectedValue(new Error('boom'));
      const { interaction, calls } = fakeButton('h1:x');
      await expect(gateway.handleButton(interaction)).resolves.toBeUndefined();
      expect(calls).toEqual(['deferUpdate', 'followUp']);
    });

    it('drops the click when the acknowledgement fails (too late)', async () => {
      const { interaction } = fakeButton('h1:x', {
        deferUpdate: jest.fn(async () => Promise.reject(new Error('Unknown interaction'))),
      });
      await gateway.handleButton(interaction);
      expect(onButton).not.toHaveBeenCalled();
      expect(log.text()).toContain('acknowledgement failed');
    });

    it('handles button interactions emitted on the client and ignores other interactions', async () => {
      const { interaction, calls } = fakeButton('h1:via_event');
      client.emit(Events.InteractionCreate, interaction as never);
      const no = () => false;
      const autocomplete = { isButton: no, isModalSubmit: no, isChatInputCommand: no, isMessageContextMenuCommand: no };
      client.emit(Events.InteractionCreate, autocomplete as never);
      await flush();
      expect(calls).toEqual(['deferUpdate', 'editReply']);
      expect(onButton).toHaveBeenCalledTimes(1);
    });
  });

  describe('client and sender', () => {
    it('creates a client with non-privileged intents, Channel partials and REST retries by default', async () => {
      const own = new DiscordGateway({
        token: 't',
        intake: { accept: async () => ({ status: 'accepted' }) },
        resolveRoom,
        defaultOrgId: () => undefined,
        onButton,
        logger: log.logger,
      });
      const options = (own as unknown as { client: Client }).client.options;
      expect(options.intents.has(GatewayIntentBits.Guilds)).toBe(true);
      expect(options.intents.has(GatewayIntentBits.GuildMessages)).toBe(true);
      expect(options.intents.has(GatewayIntentBits.DirectMessages)).toBe(true);
      expect(options.intents.has(GatewayIntentBits.MessageContent)).toBe(false);
      expect(options.partials).toContain(Partials.Channel);
      expect(options.rest?.retries).toBe(3);
      expect(options.allowedMentions).toEqual({ parse: [], repliedUser: true });
      await own.stop();
      expect(gatewayIntents(true)).toContain(GatewayIntentBits.MessageContent);
    });

    it('start() logs in with the token and stop() destroys the client', async () => {
      const login = jest.spyOn(client, 'login').mockResolvedValue('test-token');
      const destroy = jest.spyOn(client, 'destroy');
      await gateway.start();
      expect(login).toHaveBeenCalledWith('test-token');
      await gateway.stop();
      expect(destroy).toHaveBeenCalled();
      client.emit(Events.MessageCreate, fakeMessage({ guildId: null, content: 'after stop' }) as never);
      await flush();
      expect(accepted).toHaveLength(0);
    });

    it(
      'sender() fetches the channel and sends chunks with a reply ' + 'reference that tolerates deleted messages',
      async () => {
        let sent = 0;
        const send = jest.fn(async (_opts: unknown): Promise<{ id: string }> => ({ id: `sent${++sent}` }));
        jest.spyOn(client.channels, 'fetch').mockResolvedValue({ isSendable: () => true, send } as never);
        const result = await gateway.sender().send({
          platform: 'discord',
          roomId: CHANNEL_ID,
          text: 'はい',
          inReplyTo: { platformMessageId: '700000000000000001', accountId: ALICE_ID },
          options: [{ answer: '1', label: '承認', key: 'h1:ok', style: 'primary' }],
        });
        expect(result).toEqual({ platformMessageId: 'sent1' });
        expect(send).toHaveBeenCalledWith({
          content: 'はい\n\n1. 承認',
          allowedMentions: { parse: [], repliedUser: true },
          components: [{ type: 1, components: [{ type: 2, custom_id: 'h1:ok', label: '承認', style: 1 }] }],
          reply: { messageReference: '700000000000000001', failIfNotExists: false },
        });
      },
    );

    it('sender() fails cleanly for a channel it cannot post to', async () => {
      jest.spyOn(client.channels, 'fetch').mockResolvedValue(null);
      await expect(gateway.sender().send({ platform: 'discord', roomId: '1', text: 'x' })).rejects.toMatchObject({
        code: 'EXTERNAL_API_FAILED',
      });
    });
  });
});
