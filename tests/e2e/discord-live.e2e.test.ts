import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { FAKE_BOT, FAKE_CHANNEL_ID, FAKE_GUILD_ID, startFakeDiscord, type FakeDiscord } from '../fakes/discord-server';
import { OTHER_BOT, TANAKA, YAMADA, discordDirectory } from '../helpers/discord';
import { startTestService, waitFor, type TestService } from '../helpers/service';

/**
 * The service's own discord.js client (built from config, `DISCORD_API_BASE_URL` pointing at a local
 * Discord-compatible server) against real gateway and REST traffic: mentions, Discord's reply gesture and
 * button clicks.
 */
describe('Discord through the real discord.js client', () => {
  let discord: FakeDiscord;
  let svc: TestService;
  const llm = new FakeAnthropic();
  const mention = `<@${FAKE_BOT.id}>`;

  beforeAll(async () => {
    discord = await startFakeDiscord();
    svc = await startTestService({
      DISCORD_BOT_TOKEN: discord.token,
      DISCORD_API_BASE_URL: discord.apiBaseUrl,
      CONSOLE_ENABLED: 'false',
      ORG_DIRECTORY_FILE: discordDirectory(FAKE_GUILD_ID, FAKE_CHANNEL_ID),
    });
    await waitFor(() => discord.readySessions === 1, 10000, 'gateway session');
  }, 30000);
  afterAll(async () => {
    await svc.close();
    await discord.stop();
    llm.stop();
  });

  /** Asks for a task with low confidence: the bot posts a confirmation question (with buttons). */
  async function askQuestion(title: string) {
    llm.script(toolCall('create_task', { assignee: '田中太郎', title }, { overall: 0.6 }));
    const before = discord.posted.length;
    discord.say({ author: YAMADA, content: `${mention} 田中太郎さんに${title}をお願い`, mentions: [FAKE_BOT] });
    await waitFor(() => discord.posted.length > before, 10000, 'confirmation question');
    const question = discord.posted.at(-1)!;
    expect(question.components.length).toBeGreaterThan(0);
    // The person answers after reading it: once the post is recorded as delivered (earlier answers are reminded).
    const delivered = { platformMessageId: question.id, status: 'sent' };
    await waitFor(() => svc.db.outboundMessage.findFirst({ where: delivered }), 5000, 'question delivered');
    return question;
  }

  it('a mention is answered by a post through REST, as a reply to the message', async () => {
    llm.script(replyCall('こんにちはウル！🐺'));
    const id = discord.say({ author: YAMADA, content: `${mention} こんにちは`, mentions: [FAKE_BOT] });
    await waitFor(() => discord.posted.length === 1, 10000, 'reply');
    expect(discord.posted[0]).toMatchObject({ channelId: FAKE_CHANNEL_ID, replyTo: id });
    expect(discord.posted[0]!.content).toContain('こんにちはウル');
    const post = discord.calls.find((c) => c.method === 'POST' && c.path === `/channels/${FAKE_CHANNEL_ID}/messages`);
    expect(post?.authorized).toBe(true);
  });

  it("replies to other people's messages and replies from bots are not addressed to the bot", async () => {
    const answer = discord.posted[0]!;
    const before = discord.posted.length;
    const colleague = discord.say({ author: TANAKA, content: '会議室どこにする？' });
    discord.say({ author: YAMADA, content: 'それでお願い', replyTo: colleague });
    discord.say({ author: OTHER_BOT, content: 'それでお願い', replyTo: answer.id });
    // A marker the bot does answer: the messages before it have been handled (or ignored) by then.
    llm.script(replyCall('了解ウル🐺'));
    discord.say({ author: YAMADA, content: `${mention} いまのは気にしないで`, mentions: [FAKE_BOT] });
    await waitFor(() => discord.posted.length > before, 10000, 'answer to the marker');
    await new Promise((r) => setTimeout(r, 300));
    expect(discord.posted.slice(before).map((m) => m.content)).toEqual([expect.stringContaining('了解ウル')]);
    expect(llm.pending).toBe(0);
  });

  it("Discord's reply gesture (no <@bot>, with the reply ping) answers the bot's question", async () => {
    const question = await askQuestion('議事録の清書');
    llm.script(replyCall('登録したウル！🐺'));
    discord.say({ author: YAMADA, content: 'はい', replyTo: question.id });
    await waitFor(() => discord.lastPostContaining('登録したウル'), 10000, 'report');
    expect(await svc.db.task.count({ where: { title: '議事録の清書' } })).toBe(1);
    expect(
      await svc.db.pendingAction.findFirst({ where: { roomId: FAKE_CHANNEL_ID }, orderBy: { createdAt: 'desc' } }),
    ).toMatchObject({ status: 'executed' });
  });

  it('the reply gesture with the ping turned off answers too (the bot is not in `mentions`)', async () => {
    const question = await askQuestion('備品の発注');
    const before = discord.posted.length;
    discord.say({ author: YAMADA, content: 'いいえ', replyTo: question.id, pingReply: false });
    await waitFor(() => discord.posted.length > before, 10000, 'cancellation');
    expect(discord.posted.at(-1)!.content).toMatch(/取りやめた/);
    expect(await svc.db.task.count({ where: { title: '備品の発注' } })).toBe(0);
  });

  it('a button click (INTERACTION_CREATE) reaches the service and gets its interaction response', async () => {
    const question = await askQuestion('資料の印刷');
    const approve = question.components.flatMap((r) => r.components).find((b) => b.label === '承認')!;
    llm.script(replyCall('印刷の件、登録したウル！🐺'));
    const click = discord.click({ user: YAMADA, messageId: question.id, customId: approve.custom_id! });
    await waitFor(() => svc.db.task.count({ where: { title: '資料の印刷' } }), 10000, 'task created by the click');
    const response = discord.interactionResponses.find((r) => r.interactionId === click.interactionId);
    // Acknowledged (deferred update 6, or an update of the message 7) within Discord's window.
    expect([6, 7]).toContain(response?.type);
    await waitFor(() => discord.lastPostContaining('印刷の件、登録したウル'), 10000, 'report');
  });
});
