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
  /** Message edits (PATCH /channels/{c}/messages/{m}): the question's buttons removed, what happened added. */
  const edits: { messageId: string; content: string; components: unknown[] }[] = [];
  /** Ephemeral notes to each click (by interaction id). */
  const notes = new Map<string, string[]>();
  let clockOffsetMs = 0;
  const client = new Client({ intents: [] });
  let messageSeq = 700000000000000100n;

  beforeAll(async () => {
    (client as unknown as { user: unknown }).user = { id: BOT_ID };
    client.login = async () => 'logged-in';
    client.destroy = async () => undefined;
    let id = 900000000000000000n;
    (client.channels as unknown as { fetch: unknown }).fetch = async (channelId: string) => ({
      isSendable: () => true,
      isTextBased: () => true,
      send: async (o: { content: string; components?: unknown[] }) => {
        sent.push({ channelId, content: o.content, components: (o.components ?? []) as never });
        id++;
        return { id: String(id) };
      },
      messages: {
        fetch: async (messageId: string) => ({
          content: sent[Number(BigInt(messageId) - 900000000000000001n)]!.content,
          edit: async (o: { content: string; components: unknown[] }) => {
            edits.push({ messageId, content: o.content, components: o.components });
          },
        }),
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
    svc = await startTestService(env, { discordClient: client, now: () => new Date(Date.now() + clockOffsetMs) });
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

  let clickSeq = 600000000000000000n;
  /** A click on a button; returns the interaction id (its ephemeral notes are in `notes`). */
  function click(customId: string): string {
    const id = String(++clickSeq);
    client.emit(Events.InteractionCreate, {
      id,
      customId,
      channelId: CHANNEL,
      user: { id: YAMADA.id },
      isButton: () => true,
      deferUpdate: async () => undefined,
      reply: async () => undefined,
      followUp: async (o: { content: string }) => void notes.set(id, [...(notes.get(id) ?? []), o.content]),
      editReply: async () => undefined,
    } as never);
    return id;
  }
  const noteTo = (id: string) => waitFor(() => notes.get(id)?.[0], 8000, 'ephemeral note');
  const idOf = (i: number) => String(900000000000000001n + BigInt(i));
  const settle = () => new Promise((r) => setTimeout(r, 500));
  const buttons = (i: number) => sent[i]!.components.flatMap((r) => r.components);

  it('`<@bot> はい` approves; a double click on the first 承認 asks once more; one announcement', async () => {
    llm.script(toolCall('announce', { recipients: ['田中太郎', '鈴木健二'], message: '明日は在宅勤務の日です' }));
    say(`<@${BOT_ID}> 田中さんと鈴木さんに明日は在宅勤務の日と伝えて`);
    await waitFor(() => sent.length === 1, 8000, 'question');
    expect(sent[0]!.content).toContain('宛先: 2人（田中太郎、鈴木健二）');
    const approve = buttons(0).find((b) => b.label === '承認')!;
    expect(approve.custom_id).toMatch(/_a0$/);

    // A double click: two interactions for the same first-round button. One counts (the second question is
    // asked once, in the room); the other is told privately to answer that question.
    click(approve.custom_id);
    const second = click(approve.custom_id);
    await waitFor(() => sent.length === 2, 8000, 'second question');
    expect(sent[1]!.content).toMatch(/念のため/);
    expect(await noteTo(second)).toMatch(/念のための確認/);
    // The first question says it moved on; its buttons are gone.
    const firstClosed = await waitFor(() => edits.find((e) => e.messageId === idOf(0)), 8000, 'first question edited');
    expect(firstClosed).toMatchObject({ components: [], content: expect.stringContaining('念のための確認に進んだ') });
    await settle();
    expect(sent).toHaveLength(2);
    expect(sent.some((m) => m.content.includes('明日は在宅勤務の日です') && !m.content.includes('宛先'))).toBe(false);

    // Then the person writes the answer with a mention, as Discord users do.
    llm.script(replyCall('2人に伝えたウル！🐺'));
    say(`<@${BOT_ID}> はい`);
    await waitFor(() => sent.length === 4, 8000, 'announcement and report');
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

  /** A low-confidence task (one confirmation); returns the index of its question in `sent`. */
  async function ask(title: string): Promise<number> {
    llm.script(toolCall('create_task', { assignee: '田中太郎', title }, { overall: 0.6 }));
    const before = sent.length;
    say(`<@${BOT_ID}> 田中太郎さんに${title}をお願い`);
    await waitFor(() => sent.length === before + 1, 8000, 'question');
    return before;
  }
  const tasks = (title: string) => svc.db.task.count({ where: { title } });

  it('two clicks at once: one task, one report in the room, the second clicker told privately it is done', async () => {
    const q = await ask('議事録の清書');
    const approve = buttons(q).find((b) => b.label === '承認')!;
    llm.script(replyCall('田中太郎さんに議事録の清書をお願いしたウル！🐺'));
    click(approve.custom_id);
    const second = click(approve.custom_id);
    expect(await noteTo(second)).toMatch(/もう実行済みウル: .*議事録の清書/);
    await settle();
    expect(sent.slice(q + 1).map((m) => m.content)).toEqual(['田中太郎さんに議事録の清書をお願いしたウル！🐺']);
    expect(await tasks('議事録の清書')).toBe(1);
  });

  it('a text answer removes the buttons; a click after it is told privately it is done', async () => {
    const q = await ask('備品の棚卸し');
    llm.script(replyCall('田中太郎さんに備品の棚卸しをお願いしたウル！🐺'));
    say(`<@${BOT_ID}> はい`);
    await waitFor(() => sent.length === q + 2, 8000, 'report');
    const edited = await waitFor(() => edits.find((e) => e.messageId === idOf(q)), 8000, 'question edited');
    expect(edited.components).toEqual([]);
    expect(edited.content).toContain('備品の棚卸し');
    expect(edited.content).toMatch(/✅ 実行済みウル/);
    expect(edited.content).not.toMatch(/1\. 承認/);

    const late = click(buttons(q).find((b) => b.label === '承認')!.custom_id);
    expect(await noteTo(late)).toMatch(/もう実行済みウル: .*備品の棚卸し/);
    await settle();
    expect(sent).toHaveLength(q + 2);
    expect(await tasks('備品の棚卸し')).toBe(1);
  });

  it('a text 「はい」 after a button approval is told it is already done (nothing runs again)', async () => {
    const q = await ask('契約書の確認');
    llm.script(replyCall('田中太郎さんに契約書の確認をお願いしたウル！🐺'));
    click(buttons(q).find((b) => b.label === '承認')!.custom_id);
    await waitFor(() => sent.length === q + 2, 8000, 'report');
    say(`<@${BOT_ID}> はい`);
    await waitFor(() => sent.length === q + 3, 8000, 'answer to the second はい');
    expect(sent.at(-1)!.content).toMatch(/もう実行済みウル: .*契約書の確認/);
    expect(await tasks('契約書の確認')).toBe(1);
  });

  it('a click on a cancelled confirmation says it was cancelled; on an expired one, that it expired', async () => {
    const q = await ask('名刺の発注');
    say(`<@${BOT_ID}> いいえ`);
    await waitFor(() => sent.length === q + 2, 8000, 'cancelled');
    const cancelledClick = click(buttons(q).find((b) => b.label === '承認')!.custom_id);
    expect(await noteTo(cancelledClick)).toMatch(/取り消し済み/);
    expect((await waitFor(() => edits.find((e) => e.messageId === idOf(q)), 8000, 'edited')).content).toMatch(
      /取り消し済み/,
    );

    const q2 = await ask('出張の精算');
    clockOffsetMs = 11 * 60_000;
    try {
      const expiredClick = click(buttons(q2).find((b) => b.label === '承認')!.custom_id);
      expect(await noteTo(expiredClick)).toMatch(/期限が切れていた/);
      expect((await waitFor(() => edits.find((e) => e.messageId === idOf(q2)), 8000, 'edited')).content).toMatch(
        /期限切れ/,
      );
    } finally {
      clockOffsetMs = 0;
    }
    await settle();
    expect(sent).toHaveLength(q2 + 1);
    expect(await tasks('名刺の発注')).toBe(0);
    expect(await tasks('出張の精算')).toBe(0);
  });
});
