import { loadConfig } from '../../src/config/env';
import { silentLogger } from '../../src/observability/logger';
import { startService, type Service } from '../../src/service';
import { FakeAnthropic, FAKE_ANTHROPIC_URL, replyCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook } from '../helpers/chatwork';
import { createTestDatabase } from '../helpers/db';
import { BOT_ACCOUNT, TEST_API_KEY, chatworkEnv, waitFor } from '../helpers/service';

/** Two processes on one database, as `HISHO_ROLE=intake` and `HISHO_ROLE=turns` run them (docs/operations.md). */
describe('roles: intake and turns as separate instances on one database', () => {
  let intake: Service;
  let turns: Service;
  let cw: FakeChatwork;
  let llm: FakeAnthropic;

  beforeAll(async () => {
    const t = await createTestDatabase();
    await t.close();
    const env = (role: string) =>
      loadConfig({
        NODE_ENV: 'test',
        PORT: '0',
        LOG_LEVEL: 'silent',
        DATABASE_URL: t.url,
        ANTHROPIC_API_KEY: TEST_API_KEY,
        ANTHROPIC_BASE_URL: FAKE_ANTHROPIC_URL,
        LLM_MAX_RETRIES: '0',
        LLM_DAILY_COST_LIMIT_USD: '0',
        SELF_CRITIQUE_RATE: '0',
        SENDER_TURNS_PER_MINUTE: '1000',
        HISHO_ROLE: role,
        ADMIN_TOKEN: 'an-admin-token-for-the-roles-test',
        ...chatworkEnv(),
      });
    const overrides = { logger: silentLogger(), workerPollMs: 30, chatworkBotAccountId: BOT_ACCOUNT };
    // One after the other: both would import the sample directory into the empty database at once.
    intake = await startService(env('intake'), { ...overrides, instanceId: 'intake' });
    // The turns instance polls once a minute: it answers within the test only when the intake's NOTIFY wakes it.
    turns = await startService(env('turns'), { ...overrides, workerPollMs: 60_000, instanceId: 'turns' });
    cw = new FakeChatwork().install();
    llm = new FakeAnthropic();
  }, 60000);

  afterAll(async () => {
    llm?.stop();
    await Promise.all([intake?.stop(), turns?.stop()]);
  });

  it('the intake instance stores the webhooks, the turns instance (woken by NOTIFY) answers each once', async () => {
    const n = 6;
    llm.script(...Array.from({ length: n + 3 }, (_, i) => replyCall(`返事${i}ウル🐺`)));
    const deliveries = Array.from({ length: n }, (_, i) =>
      mentionDelivery({ from: 1004, room: 7200 + (i % 3), body: `[To:9999] 質問${i}` }),
    );
    const statuses = await Promise.all(
      deliveries.map((d) => postWebhook(`http://127.0.0.1:${intake.port}`, d.raw, d.signature).then((r) => r.status)),
    );
    expect(statuses).toEqual(Array(n).fill(200));
    await waitFor(() => cw.posts.length >= n, 15000, 'all replies');
    await new Promise((r) => setTimeout(r, 300));
    // Each message answered once, every one by the turns instance (its claim token starts with its instance id).
    expect(cw.posts).toHaveLength(n);
    const repliedTo = cw.posts.map((p) => /to=\d+-(\d+)\]/.exec(p.body)?.[1]);
    expect(new Set(repliedTo)).toEqual(new Set(deliveries.map((d) => d.messageId)));
    const items = await intake.db.workItem.findMany({ where: { type: 'user_request' } });
    expect(items).toHaveLength(n);
    expect(items.every((i) => i.state === 'done' && i.claimedBy?.startsWith('turns:'))).toBe(true);
    expect(intake.pool.busy).toBe(0);
  }, 30000);

  it('the turns instance serves health and metrics but no webhooks; the intake instance serves /admin', async () => {
    const d = mentionDelivery({ from: 1004, room: 7300, body: '[To:9999] こんにちは' });
    expect((await postWebhook(`http://127.0.0.1:${turns.port}`, d.raw, d.signature)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${turns.port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${turns.port}/readyz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${turns.port}/metrics`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${turns.port}/admin`, { redirect: 'manual' })).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${intake.port}/admin`, { redirect: 'manual' })).status).not.toBe(404);
    const stored = await turns.db.workItem.count({ where: { dedupeKey: { contains: d.messageId } } });
    expect(stored).toBe(0);
  });
});
