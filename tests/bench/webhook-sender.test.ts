import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { completeAnswer, deliver } from '../../bench/webhook-sender';

/** The bench's webhook sender writes HTTP/1.1 on a plain socket: what it sends and when it counts an answer. */
describe('the bench webhook sender', () => {
  let server: http.Server;
  let port: number;
  const seen: { method?: string; url?: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  let status = 200;
  let hangUp = false;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() });
        if (hangUp) return void req.socket.destroy();
        res.writeHead(status, { 'content-length': '2' });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('posts the signed body on a connection of its own and resolves with the time to the 200', async () => {
    status = 200;
    hangUp = false;
    const raw = JSON.stringify({ webhook_event: { body: '[To:1] 田中さん、よろしく' } });
    const ms = await deliver(port, { raw, sig: 'c2lnbmF0dXJl+/=' });
    expect(ms).toBeGreaterThan(0);
    expect(seen.at(-1)).toMatchObject({
      method: 'POST',
      url: '/webhooks/chatwork',
      body: raw,
      headers: expect.objectContaining({
        'x-chatworkwebhooksignature': 'c2lnbmF0dXJl+/=',
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(raw)),
        connection: 'close',
      }),
    });
  });

  it('rejects an answer that is not a 200, and a connection closed before the answer', async () => {
    status = 401;
    await expect(deliver(port, { raw: '{}', sig: 'x' })).rejects.toThrow('webhook 401');
    hangUp = true;
    await expect(deliver(port, { raw: '{}', sig: 'x' })).rejects.toThrow(/closed before/);
    hangUp = false;
  });

  it('counts an answer only once its head and its Content-Length body are in', () => {
    const whole = Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    expect(completeAnswer(whole.subarray(0, 20))).toBeNull();
    expect(completeAnswer(whole.subarray(0, whole.length - 1))).toBeNull();
    expect(completeAnswer(whole)).toEqual({ status: 200 });
    expect(completeAnswer(Buffer.from('HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n'))).toEqual({
      status: 503,
    });
  });
});
