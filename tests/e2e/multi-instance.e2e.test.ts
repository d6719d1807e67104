import { loadConfig } from '../../src/config/env';
import { silentLogger } from '../../src/observability/logger';
import { startService } from '../../src/service';
import { FakeAnthropic, FAKE_ANTHROPIC_URL, replyCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook } from '../helpers/chatwork';
import { createTestDatabase } from '../helpers/db';
import { BOT_ACCOUNT, TEST_API_KEY, chatworkEnv, waitFor } from '../helpers/service';

describe('two service instances on one database (R-Q4)', () => {
  it('answer every message exactly once, whichever instance the webhooks reach', async () => {
    const t = await createTestDatabase();
    await t.close();
    const env = loadConfig({
      NODE_ENV: 'test',
      PORT: '0',
      LOG_LEVEL: 'silent',
      DATABASE_URL: t.url,
      ANTHROPIC_API_KEY: TEST_API_KEY,
      ANTHROPIC_BASE_URL: FAKE_ANTHROPIC_URL,
      LLM_MAX_RETRIES: '0',
      LLM_DAILY_COST_LIMIT_USD: '0',
      WORKER_CONCURRENCY: '3',
      SENDER_TURNS_PER_MINUTE: '1000',
      ...chatworkEnv(),
    });
    const [a, b] = await Promise.all([
      startService(env, {
        logger: silentLogger(),
        workerPollMs: 30,
        chatworkBotAccountId: BOT_ACCOUNT,
        instanceId: 'a',
      }),
      startService(env, {
        logger: silentLogger(),
        workerPollMs: 30,
        chatworkBotAccountId: BOT_ACCOUNT,
        instanceId: 'b',
      }),
    ]);
    const cw = new FakeChatwork().install();
    const llm = new FakeAnthropic();
    try {
      const n = 24;
      llm.script(...Array.from({ length: n + 5 }, (_, i) => replyCall(`返事${i}ウル🐺`)));
      // Each message is delivered to both instances (as account and room webhooks would), concurrently.
      const deliveries = Array.from({ length: n }, (_, i) =>
        mentionDelivery({ from: 1004, room: 7100 + (i % 4), body: `[To:9999] 質問${i}` }),
      );
      const statuses = await Promise.all(
        deliveries.flatMap((d) =>
          [a, b].map((s) => postWebhook(`http://127.0.0.1:${s.port}`, d.raw, d.signature).then((r) => r.status)),
        ),
      );
      expect(statuses.every((s) => s === 200)).toBe(true);
      await waitFor(() => cw.posts.length >= n, 15000, 'all replies');
      await new Promise((r) => setTimeout(r, 500));
      expect(cw.posts).toHaveLength(n);
      const repliedTo = cw.posts.map((p) => /to=\d+-(\d+)\]/.exec(p.body)?.[1]);
      expect(new Set(repliedTo).size).toBe(n);
      const items = await a.db.workItem.findMany({ where: { type: 'user_request' } });
      expect(items).toHaveLength(n);
      expect(items.every((i) => i.state === 'done')).toBe(true);
    } finally {
      llm.stop();
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 40000);
});
