import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import {
  FAKE_CHANNEL_ID,
  FAKE_GUILD_ID,
  startFakeDiscord,
  type Click,
  type FakeDiscord,
} from '../fakes/discord-server';
import { TANAKA, YAMADA, discordDirectory } from '../helpers/discord';
import { startTestService, waitFor, type TestService } from '../helpers/service';

/**
 * Issue 44 through the service's real discord.js client against the local Discord-compatible server (which keeps
 * Discord's rules: one callback per interaction, within 3 seconds): `/hisho` answered privately or publicly, in
 * time however slow the model; a private confirmation stays private, its click answered privately; the message
 * command 「Hishoに頼む」 turns someone's message into a request.
 */
describe('Discord: /hisho and 「Hishoに頼む」 (real discord.js client, local server)', () => {
  let discord: FakeDiscord;
  let svc: TestService;
  const llm = new FakeAnthropic();

  beforeAll(async () => {
    discord = await startFakeDiscord();
    svc = await startTestService({
      DISCORD_BOT_TOKEN: discord.token,
      DISCORD_API_BASE_URL: discord.apiBaseUrl,
      CONSOLE_ENABLED: 'false',
      ORG_DIRECTORY_FILE: discordDirectory(FAKE_GUILD_ID, FAKE_CHANNEL_ID),
    });
    await waitFor(() => discord.readySessions === 1, 10000, 'gateway session');
    await waitFor(() => discord.commands.length === 2, 10000, 'commands registered');
  }, 30000);
  afterAll(async () => {
    await svc.close();
    await discord.stop();
    llm.stop();
  });

  const callback = (c: Click) => discord.interactionResponses.find((r) => r.interactionId === c.interactionId);
  const answersTo = (c: Click) => discord.followUps.filter((f) => f.token === c.token);
  const answerTo = (c: Click, what = 'answer') => waitFor(() => answersTo(c)[0], 10000, what);
  const settle = () => new Promise((r) => setTimeout(r, 700));
  /** What the model was shown as the person's message in the latest request. */
  const lastUserText = () => JSON.stringify(llm.requests.at(-1)?.messages ?? []);

  it('registers /hisho and the message command in the allow-listed guild, English with Japanese names', () => {
    const hisho = discord.commands.find((c) => c.name === 'hisho')!;
    expect(hisho).toMatchObject({ type: 1, description_localizations: { ja: expect.stringContaining('Hishoに頼む') } });
    expect(hisho.options!.map((o) => [o.name, o.type, o.name_localizations?.ja, o.required ?? false])).toEqual([
      ['request', 3, '依頼', true],
      ['public', 5, '公開', false],
    ]);
    expect(discord.commands.find((c) => c.type === 3)).toMatchObject({
      name: 'Ask Hisho',
      name_localizations: { ja: 'Hishoに頼む' },
    });
    expect(discord.globalCommands).toEqual([]);
    const puts = discord.calls.filter((c) => c.method === 'PUT');
    expect(puts.map((c) => [c.path, c.status])).toEqual([
      [`/applications/${discord.applicationId}/guilds/${FAKE_GUILD_ID}/commands`, 200],
    ]);
  });

  it('/hisho 依頼 without 公開: acknowledged at once privately, answered privately, nothing in the channel', async () => {
    const before = discord.posted.length;
    llm.script(replyCall('今日の予定は10時の定例会議だけウル🐺'));
    const c = discord.slash({ user: YAMADA, options: { request: '今日の予定を教えて' } });
    const answer = await answerTo(c);
    expect(callback(c)).toMatchObject({ type: 5, data: { flags: 64 } });
    expect(answer).toMatchObject({ ephemeral: true, content: '今日の予定は10時の定例会議だけウル🐺' });
    expect(lastUserText()).toContain('今日の予定を教えて');
    await settle();
    expect(answersTo(c)).toHaveLength(1);
    expect(discord.posted.length).toBe(before);
  });

  it('/hisho with 公開:true: the deferral and the answer are visible to the channel', async () => {
    llm.script(replyCall('みんなに共有するウル🐺 明日は全社会議ウル'));
    const c = discord.slash({ user: YAMADA, options: { request: '明日の予定をみんなに', public: true } });
    const answer = await answerTo(c);
    expect(callback(c)!.type).toBe(5);
    expect(Number(callback(c)!.data?.flags ?? 0) & 64).toBe(0);
    expect(answer).toMatchObject({ ephemeral: false, content: 'みんなに共有するウル🐺 明日は全社会議ウル' });
  });

  it('a model that takes 4 s: still acknowledged within Discord’s 3 s (deferred), then answered', async () => {
    llm.script({ ...replyCall('お待たせしたウル🐺 調べ終わったウル'), delayMs: 4000 });
    const started = Date.now();
    const c = discord.slash({ user: YAMADA, options: { request: '先週の議事録を探して' } });
    await waitFor(() => callback(c), 3000, 'acknowledgement within 3 s');
    const answer = await answerTo(c);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4000);
    expect(answer).toMatchObject({ ephemeral: true, content: 'お待たせしたウル🐺 調べ終わったウル' });
    // Every callback the service gave was accepted (none too late: 404, none twice: 400).
    const callbacks = discord.calls.filter((x) => x.path.startsWith('/interactions/'));
    expect(callbacks.every((x) => x.status === 204)).toBe(true);
  });

  it('a confirmation asked privately stays private; its 承認 click is answered privately; one task', async () => {
    const before = discord.posted.length;
    llm.script(toolCall('create_task', { assignee: '田中太郎', title: '見積書の送付' }, { overall: 0.6 }));
    const c = discord.slash({ user: YAMADA, options: { request: '田中太郎さんに見積書の送付をお願い' } });
    const question = await answerTo(c, 'private question');
    expect(question.ephemeral).toBe(true);
    expect(question.content).toContain('見積書の送付');
    const buttons = question.components.flatMap((r) => r.components);
    expect(buttons.map((b) => b.label)).toEqual(['承認', 'キャンセル', '変更する']);
    const delivered = { platformMessageId: question.id, status: 'sent' };
    await waitFor(() => svc.db.outboundMessage.findFirst({ where: delivered }), 5000, 'question delivered');

    llm.script(replyCall('田中太郎さんに見積書の送付をお願いしたウル！🐺'));
    const approve = buttons.find((b) => b.label === '承認')!.custom_id!;
    const click = discord.click({ user: YAMADA, messageId: question.id, customId: approve });
    const report = await answerTo(click, 'private report');
    expect(report).toMatchObject({ ephemeral: true, content: '田中太郎さんに見積書の送付をお願いしたウル！🐺' });
    expect(callback(click)!.type).toBe(6);
    await settle();
    expect(await svc.db.task.count({ where: { title: '見積書の送付' } })).toBe(1);
    expect(discord.posted.length).toBe(before);
  });

  it('「Hishoに頼む」 on Tanaka’s message: his words and name become Yamada’s request, answered privately', async () => {
    const before = discord.posted.length;
    const target = discord.say({ author: TANAKA, content: '来週の営業会議の資料、誰か準備できますか？' });
    await settle();
    expect(discord.posted.length).toBe(before); // a message not addressed to the bot is not answered
    llm.script(replyCall('資料づくりのタスクを用意できるウル🐺 担当を決めてほしいウル'));
    const c = discord.messageCommand({ user: YAMADA, name: 'Ask Hisho', messageId: target });
    const answer = await answerTo(c);
    expect(callback(c)).toMatchObject({ type: 5, data: { flags: 64 } });
    expect(answer).toMatchObject({
      ephemeral: true,
      content: '資料づくりのタスクを用意できるウル🐺 担当を決めてほしいウル',
    });
    expect(lastUserText()).toContain('来週の営業会議の資料、誰か準備できますか？');
    expect(lastUserText()).toContain('田中太郎');
    const stored = await svc.db.workItem.findFirst({ where: { dedupeKey: { contains: c.interactionId } } });
    expect(stored?.payload).toMatchObject({ senderAccountId: YAMADA.id });
    await settle();
    expect(discord.posted.length).toBe(before);
  });
});
