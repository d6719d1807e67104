import { captureLogger } from '../helpers/logs';
import { FakeAnthropic, replyCall } from '../fakes/fake-anthropic';
import { FAKE_BOT, FAKE_CHANNEL_ID, FAKE_GUILD_ID, startFakeDiscord, type FakeDiscord } from '../fakes/discord-server';
import { FakeChatwork, mentionDelivery, postWebhook } from '../helpers/chatwork';
import { consoleBotMessages, consoleSay } from '../helpers/console';
import { YAMADA, discordDirectory } from '../helpers/discord';
import { chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';
import type { ServiceOverrides } from '../../src/service';

/**
 * Issue 29 point 4: a Discord outage at start-up leaves ChatWork and the console working; the Discord adapter
 * is reported down in /readyz and /metrics, retried in the background, and comes up once Discord answers.
 */
describe('Discord outage at start-up', () => {
  let discord: FakeDiscord;
  let svc: TestService | null = null;
  const llm = new FakeAnthropic();
  const mention = `<@${FAKE_BOT.id}>`;

  beforeEach(async () => {
    discord = await startFakeDiscord();
  });
  afterEach(async () => {
    await svc?.close();
    svc = null;
    await discord.stop();
  });
  afterAll(() => llm.stop());

  function start(token: string, o: ServiceOverrides = {}): Promise<TestService> {
    return startTestService(
      {
        ...chatworkEnv(),
        DISCORD_BOT_TOKEN: token,
        DISCORD_API_BASE_URL: discord.apiBaseUrl,
        ORG_DIRECTORY_FILE: discordDirectory(FAKE_GUILD_ID, FAKE_CHANNEL_ID),
      },
      { adapterRetryMs: 100, ...o },
    );
  }

  async function readyz(s: TestService): Promise<{ status: number; body: { adapters?: Record<string, string> } }> {
    const res = await fetch(`${s.url}/readyz`);
    return { status: res.status, body: (await res.json()) as { adapters?: Record<string, string> } };
  }

  async function adapterUp(s: TestService, platform: string): Promise<number | null> {
    const text = await (await fetch(`${s.url}/metrics`)).text();
    const m = new RegExp(`^hisho_adapter_up\\{platform="${platform}"\\} (\\d)$`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  }

  /** ChatWork and the console still answer while Discord is down. */
  async function othersWork(s: TestService): Promise<void> {
    const cw = new FakeChatwork().install();
    llm.script(replyCall('ChatWorkは元気ウル🐺'));
    const d = mentionDelivery({ from: 1001, room: 5001, body: '[To:9999] 動いてる？' });
    expect((await postWebhook(s.url, d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length === 1, 10000, 'ChatWork reply');
    expect(cw.posts[0]!.body).toContain('ChatWorkは元気ウル');
    llm.script(replyCall('コンソールも元気ウル🐺'));
    expect((await consoleSay(s, 'yamada-ichiro', 'console-general', '動いてる？')).status).toBeLessThan(300);
    await waitFor(async () => (await consoleBotMessages(s, 'console-general')).length === 1, 10000, 'console reply');
  }

  /** Discord answers a mention once it is up. */
  async function discordWorks(): Promise<void> {
    llm.script(replyCall('Discordも戻ったウル🐺'));
    const before = discord.posted.length;
    discord.say({ author: YAMADA, content: `${mention} 戻った？`, mentions: [FAKE_BOT] });
    await waitFor(() => discord.posted.length > before, 10000, 'Discord reply');
    expect(discord.posted.at(-1)!.content).toContain('Discordも戻ったウル');
  }

  it('REST answering 503: healthy without Discord, marked down, alerted, up once Discord recovers', async () => {
    discord.set({ restStatus: 503 });
    svc = await start(discord.token, { adapterDownAlertMs: 300 });
    const r = await readyz(svc);
    expect(r.status).toBe(200);
    expect(r.body.adapters).toEqual({ chatwork: 'up', discord: 'down', console: 'up' });
    expect(await adapterUp(svc, 'discord')).toBe(0);
    expect(await adapterUp(svc, 'chatwork')).toBe(1);
    // Retried in the background (with backoff), not once.
    await waitFor(() => discord.calls.filter((c) => c.path === '/gateway/bot').length >= 8, 10000, 'retries');
    const alert = await waitFor(() => svc!.db.adminAlert.findFirst({ where: { kind: 'adapter_down' } }), 10000);
    expect(alert.facts).toMatchObject({ adapter: 'discord' });
    // The alert's notices (one per admin room) are written before the scripted answers below: on a loaded machine
    // one of them took the answer meant for the ChatWork turn.
    const noticesLeft = () =>
      svc!.db.workItem.count({ where: { type: 'notification', state: { notIn: ['done', 'failed'] } } });
    await waitFor(async () => (await noticesLeft()) === 0, 10000, 'the alert notices');
    await othersWork(svc);

    discord.set({ restStatus: null });
    await waitFor(async () => (await readyz(svc!)).body.adapters?.discord === 'up', 15000, 'Discord up');
    expect(await adapterUp(svc, 'discord')).toBe(1);
    await discordWorks();
  }, 60000);

  it('a gateway that never sends READY: healthy without Discord, up once READY comes', async () => {
    discord.set({ ready: false });
    svc = await start(discord.token);
    expect((await readyz(svc)).body.adapters).toMatchObject({ discord: 'down', chatwork: 'up' });
    await othersWork(svc);
    expect(discord.identifies.length).toBeGreaterThanOrEqual(1);
    expect((await readyz(svc)).body.adapters?.discord).toBe('down');

    // discord.js gives up waiting for READY after 15 s and identifies again: this time READY comes.
    discord.set({ ready: true });
    await waitFor(async () => (await readyz(svc!)).body.adapters?.discord === 'up', 30000, 'Discord up');
    expect(discord.readySessions).toBe(1);
    await discordWorks();
  }, 90000);

  it('a rejected token: one clear log line, the adapter down, no crash and no quick retries', async () => {
    const { logger, lines } = captureLogger('info');
    svc = await start('not-the-right-token', { logger });
    const discordLines = () => lines.filter((l) => l.adapter === 'discord' && Number(l.level) >= 40);
    await waitFor(() => discordLines().length > 0, 10000, 'the log line');
    await new Promise((r) => setTimeout(r, 1500));
    expect(discordLines()).toHaveLength(1);
    expect(discordLines()[0]).toMatchObject({ level: 50, msg: expect.stringMatching(/token was rejected/) });
    expect(JSON.stringify(lines)).not.toContain('not-the-right-token');
    expect(discord.calls.filter((c) => c.path === '/gateway/bot')).toHaveLength(1);
    expect((await readyz(svc)).body.adapters).toMatchObject({ discord: 'down', chatwork: 'up' });
    expect(await adapterUp(svc, 'discord')).toBe(0);
    await othersWork(svc);
  }, 30000);

  it('a token revoked while connected (gateway close 4004): one log line, down, the rest keeps working', async () => {
    const { logger, lines } = captureLogger('info');
    svc = await start(discord.token, { logger });
    await waitFor(async () => (await readyz(svc!)).body.adapters?.discord === 'up', 10000, 'Discord up');
    discord.set({ rejectToken: true });
    discord.dropConnections();
    const discordLines = () => lines.filter((l) => l.adapter === 'discord' && Number(l.level) >= 40);
    // discord.js tries to resume, is told the session is gone, identifies again and is closed with 4004.
    await waitFor(() => discordLines().length > 0, 20000, 'the log line');
    await new Promise((r) => setTimeout(r, 1000));
    expect(discordLines()).toEqual([
      expect.objectContaining({ level: 50, msg: expect.stringMatching(/token was rejected/) }),
    ]);
    expect((await readyz(svc)).body.adapters).toMatchObject({ discord: 'down', chatwork: 'up' });
    expect(await adapterUp(svc, 'discord')).toBe(0);
    await othersWork(svc);
  }, 45000);
});
