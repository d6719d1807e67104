import { loadConfig } from '../../src/config/env';
import { silentLogger } from '../../src/observability/logger';
import { startService, type Service } from '../../src/service';
import { FakeAnthropic, FAKE_ANTHROPIC_URL, replyCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook } from '../helpers/chatwork';
import { createTestDatabase } from '../helpers/db';
import { BOT_ACCOUNT, chatworkEnv, waitFor } from '../helpers/service';
import { TcpProxy } from '../helpers/tcp-proxy';

describe('database outage (R-E2)', () => {
  it('answers webhooks 503 within a bounded wait, reports not ready, stays up, and recovers', async () => {
    const t = await createTestDatabase();
    await t.close();
    const target = new URL(t.url);
    const proxy = new TcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    await proxy.start();
    const viaProxy = new URL(t.url);
    viaProxy.port = String(proxy.port);
    const svc: Service = await startService(
      loadConfig({
        NODE_ENV: 'test',
        PORT: '0',
        LOG_LEVEL: 'silent',
        DATABASE_URL: viaProxy.toString(),
        ANTHROPIC_API_KEY: 'sk-ant-test-0123456789abcdefghijklmnop',
        ANTHROPIC_BASE_URL: FAKE_ANTHROPIC_URL,
        LLM_MAX_RETRIES: '0',
        LLM_DAILY_COST_LIMIT_USD: '0',
        ...chatworkEnv(),
      }),
      { logger: silentLogger(), workerPollMs: 50, chatworkBotAccountId: BOT_ACCOUNT },
    );
    const url = `http://127.0.0.1:${svc.port}`;
    const cw = new FakeChatwork().install();
    const llm = new FakeAnthropic();
    try {
      proxy.cut();
      const d = mentionDelivery({ from: 1004, room: 5001, body: '[To:9999] 落ちてる？' });
      const t0 = Date.now();
      const res = await postWebhook(url, d.raw, d.signature);
      expect(res.status).toBe(503);
      expect(Date.now() - t0).toBeLessThan(8000);
      expect((await fetch(`${url}/readyz`)).status).toBe(503);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);

      proxy.restore();
      await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, 10000, 'ready again');
      llm.script(replyCall('戻ったウル！お待たせしたウル🐺'));
      const again = mentionDelivery({ from: 1004, room: 5001, body: '[To:9999] 戻った？' });
      expect((await postWebhook(url, again.raw, again.signature)).status).toBe(200);
      await waitFor(() => cw.posts.length === 1, 10000, 'reply after recovery');
      expect(cw.posts[0]!.body).toContain('戻ったウル');
    } finally {
      llm.stop();
      await svc.stop();
      await proxy.stop();
    }
  }, 40000);
});
