import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import {
  FAKE_BOT,
  FAKE_CHANNEL_ID,
  FAKE_GUILD_ID,
  startFakeDiscord,
  type Click,
  type FakeDiscord,
  type PostedMessage,
} from '../fakes/discord-server';
import { TANAKA, YAMADA, discordDirectory } from '../helpers/discord';
import { startTestService, waitFor, type TestService } from '../helpers/service';

/**
 * Issue 29 on Discord, through the service's real discord.js client against the local Discord-compatible
 * server: an answer to a confirmation that is already decided (a second click, a click after a text answer, a
 * click on a cancelled or expired one, someone else's click) is told the truth privately (an ephemeral
 * follow-up), never posts in the channel and never runs anything twice; a decided question loses its buttons
 * (PATCH of the message) and says what happened.
 */
describe('Discord: answers to decided confirmations (real discord.js client, local server)', () => {
  let discord: FakeDiscord;
  let svc: TestService;
  const llm = new FakeAnthropic();
  const mention = `<@${FAKE_BOT.id}>`;
  let clockOffsetMs = 0;

  beforeAll(async () => {
    discord = await startFakeDiscord();
    svc = await startTestService(
      {
        DISCORD_BOT_TOKEN: discord.token,
        DISCORD_API_BASE_URL: discord.apiBaseUrl,
        CONSOLE_ENABLED: 'false',
        ORG_DIRECTORY_FILE: discordDirectory(FAKE_GUILD_ID, FAKE_CHANNEL_ID),
      },
      { now: () => new Date(Date.now() + clockOffsetMs) },
    );
    await waitFor(() => discord.readySessions === 1, 10000, 'gateway session');
  }, 30000);
  afterAll(async () => {
    await svc.close();
    await discord.stop();
    llm.stop();
  });

  /** Yamada asks for a task with low confidence: the bot posts a confirmation question with buttons. */
  async function askQuestion(title: string): Promise<PostedMessage> {
    llm.script(toolCall('create_task', { assignee: '田中太郎', title }, { overall: 0.6 }));
    const before = discord.posted.length;
    discord.say({ author: YAMADA, content: `${mention} 田中太郎さんに${title}をお願い`, mentions: [FAKE_BOT] });
    await waitFor(() => discord.posted.length > before, 10000, 'confirmation question');
    const question = discord.posted.at(-1)!;
    expect(question.content).toContain(title);
    expect(labels(question)).toEqual(['承認', 'キャンセル', '変更する']);
    // The person answers after reading it: once the post is recorded as delivered.
    const delivered = { platformMessageId: question.id, status: 'sent' };
    await waitFor(() => svc.db.outboundMessage.findFirst({ where: delivered }), 5000, 'question delivered');
    return question;
  }

  const buttons = (m: PostedMessage) => m.components.flatMap((r) => r.components);
  const labels = (m: PostedMessage) => buttons(m).map((b) => b.label);
  const button = (m: PostedMessage, label: string) => buttons(m).find((b) => b.label === label)!.custom_id!;
  const click = (user: typeof YAMADA, m: PostedMessage, label: string) =>
    discord.click({ user, messageId: m.id, customId: button(m, label) });
  /** The follow-ups (Discord webhook posts) answering these clicks. */
  const followUpsTo = (...clicks: Click[]) => discord.followUps.filter((f) => clicks.some((c) => c.token === f.token));
  const noteTo = (c: Click) => waitFor(() => followUpsTo(c)[0], 10000, 'ephemeral note');
  /** The question edited through the channel (PATCH /channels/:c/messages/:m). */
  const questionEdit = (m: PostedMessage) =>
    waitFor(() => discord.edits.find((e) => e.messageId === m.id), 10000, 'question edited');
  const tasks = (title: string) => svc.db.task.count({ where: { title } });
  const settle = () => new Promise((r) => setTimeout(r, 700));
  const postsSince = (n: number) => discord.posted.slice(n).map((m) => m.content);

  it('two clicks on 承認 at once: one task, one report, the other clicker told privately it is done', async () => {
    const q = await askQuestion('議事録の清書');
    const before = discord.posted.length;
    llm.script(replyCall('田中太郎さんに議事録の清書をお願いしたウル！🐺'));
    const first = click(YAMADA, q, '承認');
    const second = click(YAMADA, q, '承認');

    await waitFor(() => discord.lastPostContaining('議事録の清書をお願いしたウル'), 10000, 'report');
    // One of the two clicks was the answer; the other is told, privately, that it already ran.
    const note = await waitFor(() => followUpsTo(first, second)[0], 10000, 'note to the second click');
    expect(note.ephemeral).toBe(true);
    expect(note.content).toMatch(/もう実行済みウル: .*議事録の清書/);
    expect(note.content).not.toMatch(/期限が切れ|期限切れ/);

    // The question says what happened where its buttons were.
    const edit = await questionEdit(q);
    expect(edit.body.components).toEqual([]);
    expect(String(edit.body.content)).toContain('議事録の清書');
    expect(String(edit.body.content)).toMatch(/✅ 実行済みウル/);

    await settle();
    expect(followUpsTo(first, second)).toHaveLength(1);
    expect(postsSince(before)).toEqual(['田中太郎さんに議事録の清書をお願いしたウル！🐺']);
    // Never the expiry note (「確認の期限が切れていた…」), which would invite asking again.
    expect(discord.posted.some((m) => /期限が切れ|期限切れ/.test(m.content))).toBe(false);
    expect(await tasks('議事録の清書')).toBe(1);
    // Both clicks were acknowledged within Discord's 3 seconds (deferred update), neither with a public reply.
    for (const c of [first, second])
      expect(discord.interactionResponses.find((r) => r.interactionId === c.interactionId)?.type).toBe(6);
  });

  it('「はい」 by the reply gesture, then a click on 承認: told privately it is done, no second task, no post', async () => {
    const q = await askQuestion('備品の棚卸し');
    llm.script(replyCall('田中太郎さんに備品の棚卸しをお願いしたウル！🐺'));
    discord.say({ author: YAMADA, content: 'はい', replyTo: q.id });
    await waitFor(() => discord.lastPostContaining('備品の棚卸しをお願いしたウル'), 10000, 'report');
    const after = discord.posted.length;

    const late = click(YAMADA, q, '承認');
    const note = await noteTo(late);
    expect(note.ephemeral).toBe(true);
    expect(note.content).toMatch(/もう実行済みウル: .*備品の棚卸し/);
    await settle();
    expect(postsSince(after)).toEqual([]);
    expect(followUpsTo(late)).toHaveLength(1);
    expect(await tasks('備品の棚卸し')).toBe(1);
  });

  it('a text answer (mention) edits the question’s buttons away; a late キャンセル changes nothing', async () => {
    const q = await askQuestion('契約書の確認');
    llm.script(replyCall('田中太郎さんに契約書の確認をお願いしたウル！🐺'));
    discord.say({ author: YAMADA, content: `${mention} はい`, mentions: [FAKE_BOT] });
    await waitFor(() => discord.lastPostContaining('契約書の確認をお願いしたウル'), 10000, 'report');

    const edit = await questionEdit(q);
    const patch = discord.calls.find(
      (c) => c.method === 'PATCH' && c.path === `/channels/${FAKE_CHANNEL_ID}/messages/${q.id}`,
    );
    expect(patch).toMatchObject({ status: 200, authorized: true });
    expect(edit.body.components).toEqual([]);
    const content = String(edit.body.content);
    expect(content).toContain('契約書の確認');
    expect(content).toMatch(/\*\*✅ 実行済みウル\*\*$/);
    // The options line the buttons stood for is gone with them.
    expect(content).not.toMatch(/承認/);
    expect(discord.edits.filter((e) => e.messageId === q.id)).toHaveLength(1);

    const after = discord.posted.length;
    const late = click(YAMADA, q, 'キャンセル');
    expect((await noteTo(late)).content).toMatch(/もう実行済みウル: .*契約書の確認/);
    await settle();
    expect(postsSince(after)).toEqual([]);
    expect(await tasks('契約書の確認')).toBe(1);
    expect(
      await svc.db.pendingAction.findFirst({ where: { roomId: FAKE_CHANNEL_ID }, orderBy: { createdAt: 'desc' } }),
    ).toMatchObject({ status: 'executed' });
  });

  it('a click on a cancelled confirmation: told privately 「取り消し済み」, nothing runs, nothing posted', async () => {
    const q = await askQuestion('名刺の発注');
    const before = discord.posted.length;
    discord.say({ author: YAMADA, content: 'いいえ', replyTo: q.id });
    await waitFor(() => discord.posted.length > before, 10000, 'cancellation');
    expect(discord.posted.at(-1)!.content).toMatch(/取りやめた/);
    const after = discord.posted.length;

    const late = click(YAMADA, q, '承認');
    const note = await noteTo(late);
    expect(note.ephemeral).toBe(true);
    expect(note.content).toMatch(/取り消し済み/);
    expect((await questionEdit(q)).body).toMatchObject({
      components: [],
      content: expect.stringMatching(/取り消し済みウル/),
    });
    await settle();
    expect(postsSince(after)).toEqual([]);
    expect(await tasks('名刺の発注')).toBe(0);
  });

  it('someone else clicks: told privately it is not theirs; nothing runs; the owner can still answer', async () => {
    const q = await askQuestion('出張の手配');
    const before = discord.posted.length;
    const stranger = click(TANAKA, q, '承認');
    const note = await noteTo(stranger);
    expect(note.ephemeral).toBe(true);
    expect(note.content).toMatch(/依頼した方だけ/);
    await settle();
    expect(postsSince(before)).toEqual([]);
    expect(await tasks('出張の手配')).toBe(0);
    expect(discord.edits.filter((e) => e.messageId === q.id)).toEqual([]);
    expect(
      await svc.db.pendingAction.findFirst({ where: { roomId: FAKE_CHANNEL_ID, status: 'pending' } }),
    ).toBeTruthy();

    // The question is still Yamada's to answer.
    const own = click(YAMADA, q, 'キャンセル');
    await waitFor(() => discord.posted.length > before, 10000, 'cancellation');
    expect(discord.posted.at(-1)!.content).toMatch(/取りやめた/);
    expect(followUpsTo(own)).toEqual([]);
    expect(await tasks('出張の手配')).toBe(0);
  });

  it('a click on an expired confirmation: told privately it expired; the question says 期限切れ', async () => {
    const q = await askQuestion('出張の精算');
    const before = discord.posted.length;
    clockOffsetMs = 11 * 60_000;
    try {
      const late = click(YAMADA, q, '承認');
      const note = await noteTo(late);
      expect(note.ephemeral).toBe(true);
      expect(note.content).toMatch(/期限が切れていた/);
      expect(String((await questionEdit(q)).body.content)).toMatch(/期限切れウル/);
      await settle();
    } finally {
      clockOffsetMs = 0;
    }
    expect(postsSince(before)).toEqual([]);
    expect(await tasks('出張の精算')).toBe(0);
  });
});
