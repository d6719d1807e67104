import fs from 'node:fs';
import path from 'node:path';
import { replyCall } from '../fakes/anthropic-sse';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../fakes/anthropic-server';
import { consoleBotMessages, consoleSay } from '../helpers/console';
import { createDb, type Db } from '../../src/db/prisma';
import { createTestDatabase } from '../helpers/db';
import { startHttpProxy, type TestProxy } from '../helpers/http-proxy';
import { runService } from '../helpers/process';
import { waitFor } from '../helpers/service';

const TLS = path.resolve(__dirname, '..', 'fixtures', 'tls');

/**
 * Issue 41: many companies reach the internet only through a proxy. `npm start` with HTTPS_PROXY reaches the model
 * API through it: here the fake model API is served over TLS under a host name only the proxy knows.
 */
describe('npm start behind a company proxy', () => {
  let model: FakeAnthropicServer;
  let proxy: TestProxy;
  const host = 'model.hisho.test';
  beforeAll(async () => {
    model = await startFakeAnthropicServer(() => replyCall('プロキシ越しでも元気ウル🐺'), {
      tls: {
        key: fs.readFileSync(path.join(TLS, 'test-only.key'), 'utf8'),
        cert: fs.readFileSync(path.join(TLS, 'test-only.crt'), 'utf8'),
      },
    });
    proxy = await startHttpProxy({ hosts: { [host]: model.port } });
  });
  afterAll(async () => {
    await proxy.close();
    await model.close();
  });

  const start = async (env: Record<string, string>) => {
    const t = await createTestDatabase();
    await t.close();
    const p = runService({
      DATABASE_URL: t.url,
      PORT: '0',
      LOG_LEVEL: 'info',
      ANTHROPIC_API_KEY: 'sk-ant-test-0123456789abcdefghijklmnop',
      ANTHROPIC_BASE_URL: `https://${host}:${model.port}`,
      // The test certificate's issuer, as a company that inspects HTTPS would add its own.
      NODE_EXTRA_CA_CERTS: path.join(TLS, 'test-only.crt'),
      ...env,
    });
    p.ready.catch(() => undefined);
    return { p, url: t.url };
  };

  it('the start-up check and the turns reach the model through the proxy', async () => {
    const { p, url } = await start({ HTTPS_PROXY: proxy.url });
    let db: Db | undefined;
    try {
      const port = await p.ready;
      await waitFor(() => /AI connection checked/.test(p.output()), 20000, 'the AI check');
      expect(p.output()).toContain('"msg":"AI connection checked: the model claude-opus-5-5 answers');
      expect(p.output()).toContain(`outbound calls go through the proxy ${proxy.url.replace('http://', '')}`);
      expect(proxy.connects).toContain(`${host}:${model.port}`);
      // A turn from the console.
      const svc = { url: `http://127.0.0.1:${port}` };
      expect((await consoleSay(svc, 'tanaka-taro', 'console-general', 'こんにちは')).status).toBeLessThan(300);
      db = createDb({ url, poolMax: 1 });
      const said = await waitFor(async () => (await consoleBotMessages({ db: db! }, 'console-general'))[0], 20000);
      expect(said.text).toContain('プロキシ越しでも元気ウル');
      expect(model.requests.length).toBeGreaterThanOrEqual(2);
    } finally {
      await db?.$disconnect();
      p.child.kill('SIGTERM');
      await p.exited;
    }
  }, 90000);

  it('without the proxy the same host name cannot be looked up: the log says so, and names HTTPS_PROXY', async () => {
    const { p } = await start({});
    try {
      await p.ready;
      await waitFor(() => /AI connection failed/.test(p.output()), 30000, 'the AI check');
      expect(p.output()).toMatch(
        new RegExp(
          `"msg":"AI connection failed: The host name ${host.replace(/\./g, '\\.')} could not be looked up ` +
            "\\((ENOTFOUND|EAI_AGAIN)\\): check the network's DNS, or set HTTPS_PROXY if this network reaches the " +
            'internet through a proxy\\."',
        ),
      );
    } finally {
      p.child.kill('SIGTERM');
      await p.exited;
    }
  }, 90000);
});
