import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import nock from 'nock';
import { httpRequest } from '../../src/adapters/chatwork/http-request';
import { connectionProblem } from '../../src/brain/llm-connection';
import { outboundFetch, proxyFor, useProxies } from '../../src/core/outbound-http';
import { startHttpProxy, type TestProxy } from '../helpers/http-proxy';

const TLS = path.resolve(__dirname, '..', 'fixtures', 'tls');

/** A local server answering every request with what it received. */
async function echoServer(tls = false) {
  const seen: { url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true }));
    });
  };
  const opts = {
    key: fs.readFileSync(path.join(TLS, 'test-only.key')),
    cert: fs.readFileSync(path.join(TLS, 'test-only.crt')),
  };
  const server = tls ? https.createServer(opts, handler) : http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Issue 41: HTTPS_PROXY / HTTP_PROXY / NO_PROXY are honoured by every outbound call (one module: the model client's
 * fetch, ChatWork's requests and Discord's REST all go through core/outbound-http.ts). The proxy below is the only
 * one that knows the host names `*.hisho.test`.
 */
describe('outbound HTTP through the company proxy', () => {
  let proxy: TestProxy;
  let plain: Awaited<ReturnType<typeof echoServer>>;
  let secure: Awaited<ReturnType<typeof echoServer>>;
  beforeAll(async () => {
    // Only loopback servers here; nock's interception of node:http would answer for the proxy (it matches requests
    // by their target host), so it lets go of node:http for this file.
    nock.restore();
    plain = await echoServer();
    secure = await echoServer(true);
    proxy = await startHttpProxy({
      hosts: { 'chatwork.hisho.test': plain.port, 'model.hisho.test': secure.port },
      auth: 'hisho:pass word',
    });
  });
  afterAll(async () => {
    useProxies({});
    await proxy.close();
    await plain.close();
    await secure.close();
  });
  const withAuth = () => proxy.url.replace('http://', 'http://hisho:pass%20word@');

  it('an http target is asked of the proxy by its absolute URL, with the proxy credentials', async () => {
    useProxies({ httpProxy: withAuth() });
    const res = await httpRequest(`http://chatwork.hisho.test:${plain.port}/v2/me`, {
      method: 'GET',
      headers: { 'x-chatworktoken': 't' },
      timeoutMs: 5000,
    });
    expect(res.status).toBe(200);
    expect(proxy.requests.at(-1)).toBe(`http://chatwork.hisho.test:${plain.port}/v2/me`);
    expect(plain.seen.at(-1)).toMatchObject({ url: '/v2/me' });
    // Without the proxy the name is unknown here.
    useProxies({});
    await expect(
      httpRequest(`http://chatwork.hisho.test:${plain.port}/v2/me`, { method: 'GET', headers: {}, timeoutMs: 5000 }),
    ).rejects.toThrow();
  });

  it('an https target goes through a CONNECT tunnel; TLS is checked against the target, end to end', async () => {
    useProxies({ httpsProxy: withAuth() });
    const err = await outboundFetch(`https://model.hisho.test:${secure.port}/v1/messages`, {
      method: 'POST',
      body: '{}',
    })
      .then(() => null)
      .catch((e: unknown) => e);
    // The tunnel was opened; the target's certificate (self-signed, for tests only) is not trusted by default.
    expect(proxy.connects.at(-1)).toBe(`model.hisho.test:${secure.port}`);
    expect(connectionProblem(err, `model.hisho.test:${secure.port}`)).toMatchObject({ cause: 'tls' });
    expect(connectionProblem(err, `model.hisho.test:${secure.port}`)!.en).toMatch(
      /^The TLS certificate of model\.hisho\.test is not trusted \(\w+\): .*NODE_EXTRA_CA_CERTS\.$/,
    );
  });

  it('a proxy that wants a password, or refuses the host, is named as the cause — never its password', async () => {
    useProxies({ httpsProxy: proxy.url });
    const noAuth = await outboundFetch(`https://model.hisho.test:${secure.port}/`).catch((e: unknown) => e);
    const label = proxy.url.replace('http://', '');
    expect(connectionProblem(noAuth, 'model.hisho.test:443')).toEqual({
      cause: 'proxy',
      en:
        `The proxy ${label} asks for a user name and password (407): put them in HTTPS_PROXY as ` +
        `http://user:password@${label}.`,
      ja: `プロキシ ${label} が認証を求めています: .env のプロキシの設定を http://ユーザー名:パスワード@${label} の形にしてください。`,
    });
    useProxies({ httpsProxy: withAuth() });
    const unknown = await outboundFetch('https://elsewhere.hisho.test/').catch((e: unknown) => e);
    const problem = connectionProblem(unknown, 'elsewhere.hisho.test:443')!;
    expect(problem.en).toBe(
      `The proxy ${label} refused the connection to elsewhere.hisho.test:443 (502): ask the network administrator ` +
        'to allow it.',
    );
    expect(JSON.stringify([problem, String(unknown)])).not.toContain('pass');
    // A proxy that does not answer at all.
    useProxies({ httpsProxy: 'http://127.0.0.1:1' });
    const down = await outboundFetch('https://model.hisho.test/').catch((e: unknown) => e);
    expect(connectionProblem(down, 'model.hisho.test:443')).toMatchObject({
      cause: 'proxy',
      en: 'The proxy 127.0.0.1:1 in HTTPS_PROXY does not answer (ECONNREFUSED): check HTTPS_PROXY.',
    });
  });

  it('NO_PROXY and loopback go direct; lower-case variables are read too', () => {
    useProxies({
      httpsProxy: 'http://proxy.example:8080',
      httpProxy: 'proxy.example:3128',
      noProxy: '.corp.example, intra:8443',
    });
    const via = (u: string) => proxyFor(new URL(u))?.label ?? 'direct';
    expect(via('https://api.anthropic.com/v1/messages')).toBe('proxy.example:8080');
    expect(via('http://chatwork.hisho.test/')).toBe('proxy.example:3128');
    expect(via('https://a.corp.example/')).toBe('direct');
    expect(via('https://corp.example/')).toBe('direct');
    expect(via('https://intra:8443/')).toBe('direct');
    expect(via('https://intra/')).toBe('proxy.example:8080');
    expect(via('http://127.0.0.1:3000/')).toBe('direct');
    expect(via('http://localhost/')).toBe('direct');
    useProxies({ httpsProxy: 'http://proxy.example:8080', noProxy: '*' });
    expect(via('https://api.anthropic.com/')).toBe('direct');
  });

  it('fetch bodies that are not text (Discord REST attachments) are sent as fetch would', async () => {
    useProxies({});
    const form = new FormData();
    form.append('payload_json', '{"content":"こんにちは"}');
    const res = await outboundFetch(`http://127.0.0.1:${plain.port}/channels/1/messages`, {
      method: 'POST',
      body: form,
    });
    expect(res.status).toBe(200);
    const got = plain.seen.at(-1)!;
    expect(got.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(got.body).toContain('こんにちは');
  });
});
