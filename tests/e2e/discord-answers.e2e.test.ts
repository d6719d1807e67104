import { Client, Events } from 'discord.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { BOT_ID, GUILD_ID, fakeMessage } from '../adapters/discord/fakes';
import { startTestService, waitFor, type TestService } from '../helpers/service';

const YAMADA = { id: '402938475612345601', bot: false, username: 'yamada', globalName: '山田一郎' };
const CHANNEL = '810000000000000001';

/**
 * Issue 7 points 1 and 4 on Discord, through the real gateway and pipeline: a discord.js client that never
 * connects (gateway events are emitted by the test, channel sends are recorded).
 */
describe('Discord: mentions and buttons answering a confirmation', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  type Row = { components: { custom_id: string; label: string }[] };
  const sent: { channelId: string; content: string; components: Row[] }[] = [];
  const client = new Client({ intents: [] });
  let messageSeq = 700000000000000100n;

  beforeAll(async () => {
    (client as unknown as { user: unknown }).user = { id: BOT_ID };
    client.login = async () => 'logged-in';
    client.destroy = async () => undefined;
    let id = 900000000000000000n;
    (client.channels as unknown as { fetch: unknown }).fetch = async (channelId: string) => ({
      isSendable: () => true,
      send: async (o: { content: string; components?: unknown[] }) => {
        sent.push({ channelId, content: o.content, components: (o.components ?? []) as never });
        id++;
        return { id: String(id) };
      },
    });
    // The directory allow-lists this guild and lists the channel as a member room (issue 8: other guilds are ignored).
    const sample = fs.readFileSync(path.join(__dirname, '..', '..', 'config', 'org.sample.yaml'), 'utf8');
    const directory = sample
      .replace('  timezone: Asia/Tokyo\n', `  timezone: Asia/Tokyo\n  discord_guilds: ["${GUILD_ID}"]\n`)
      .replace(
        'rooms:\n',
        `rooms:\n  - { platform: discord, id: "${CHANNEL}", name: 営業チャンネル, authority: member }\n`,
      );
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-discord-')), 'org.yaml');
    fs.writeFileSync(file, directory);
    const env = { DISCORD_BOT_TOKEN: 'discord-test-token', CONSOLE_ENABLED: 'false', ORG_DIRECTORY_FILE: file };
    svc = await startTestService(env, { discordClient: client });
  });
  afterAll(async () => {
    await svc.close();
    llm.stop();
  });

  function say(content: string): void {
    messageSeq++;
    client.emit(
      Events.MessageCreate,
      fakeMessage({
        id: String(messageSeq),
        content,
        author: YAMADA,
        channelId: CHANNEL,
        guildId: GUILD_ID,
        mentioned: [{ id: BOT_ID, bot: true, username: 'hisho' }],
        createdTimestamp: Date.now(),
        member: { displayName: '山田' },
      }) as never,
    );
  }

  function click(customId: string, n: number): void {
    client.emit(Events.InteractionCreate, {
      id: `60000000000000000${n}`,
      customId,
      channelId: CHANNEL,
      user: { id: YAMADA.id },
      isButton: () => true,
      deferUpdate: async () => undefined,
      reply: async () => undefined,
      followUp: async () => undefined,
      editReply: async () => undefined,
    } as never);
  }
  const buttons = (i: number) => sent[i]!.components.flatMap((r) => r.components);

  it('`<@bot> はい` approves; a double click on the first 承認 is asked the second time; one announcement', async () => {
    llm.script(toolCall('announce', { recipients: ['田中太郎', '鈴木健二'], message: '明日は在宅勤務の日です' }));
    say(`<@${BOT_ID}> 田中さんと鈴木さんに明日は在宅勤務の日と伝えて`);
    await waitFor(() => sent.length === 1, 8000, 'question');
    expect(sent[0]!.content).toContain('宛先: 2人（田中太郎、鈴木健二）');
    const approve = buttons(0).find((b) => b.label === '承認')!;
    expect(approve.custom_id).toMatch(/_a0$/);

    // A double click: two interactions for the same first-round button.
    click(approve.custom_id, 1);
    click(approve.custom_id, 2);
    await waitFor(() => sent.length === 3, 8000, 'two answers');
    expect(sent[1]!.content).toMatch(/念のため/);
    expect(sent[2]!.content).toMatch(/念のため/);
    expect(sent.some((m) => m.content.includes('明日は在宅勤務の日です') && !m.content.includes('宛先'))).toBe(false);

    // Then the person writes the answer with a mention, as Discord users do.
    llm.script(replyCall('2人に伝えたウル！🐺'));
    say(`<@${BOT_ID}> はい`);
    await waitFor(() => sent.length === 5, 8000, 'announcement and report');
    expect(
      sent.filter((m) => m.content.includes('明日は在宅勤務の日です') && !m.content.includes('宛先')),
    ).toHaveLength(1);
    expect(await svc.db.pendingAction.findFirst({ where: { roomId: CHANNEL } })).toMatchObject({
      status: 'executed',
      confirmationsGiven: 2,
    });
  });

  it('`<@bot> いいえ` cancels', async () => {
    llm.script(toolCall('create_task', { assignee: '田中太郎', title: '備品の発注' }, { overall: 0.6 }));
    const before = sent.length;
    say(`<@${BOT_ID}> 田中太郎さんに備品の発注をお願い`);
    await waitFor(() => sent.length === before + 1, 8000, 'question');
    say(`<@${BOT_ID}>\nいいえ`);
    await waitFor(() => sent.length === before + 2, 8000, 'cancelled');
    expect(sent.at(-1)!.content).toMatch(/取りやめた/);
    expect(await svc.db.task.count({ where: { title: '備品の発注' } })).toBe(0);
  });
});
