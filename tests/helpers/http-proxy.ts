import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';

/**
 * A company proxy in miniature: the only one that knows some host names (`hosts`: name → a port on 127.0.0.1).
 * It answers CONNECT (a tunnel, for https targets) and absolute-URL requests (for http targets), optionally behind
 * a user name and password (407 without them), and refuses hosts it does not know (502).
 */
export interface TestProxy {
  url: string;
  /** CONNECT targets asked for (host:port), in order. */
  connects: string[];
  /** Absolute URLs asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

export async function startHttpProxy(o: { hosts: Record<string, number>; auth?: string }): Promise<TestProxy> {
  const connects: string[] = [];
  const requests: string[] = [];
  const expected = o.auth ? `Basic ${Buffer.from(o.auth).toString('base64')}` : null;
  const authorised = (req: http.IncomingMessage) => !expected || req.headers['proxy-authorization'] === expected;
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    if (!authorised(req)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' });
      return void res.end();
    }
    const target = new URL(req.url ?? '');
    const port = o.hosts[target.hostname];
    if (port === undefined) {
      res.writeHead(502);
      return void res.end('unknown host');
    }
    const upstream = http.request(
      { host: '127.0.0.1', port, path: `${target.pathname}${target.search}`, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  const sockets = new Set<net.Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    connects.push(req.url ?? '');
    if (!authorised(req)) return void client.end('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n');
    const [host, port] = (req.url ?? '').split(':');
    const local = o.hosts[host ?? ''];
    if (local === undefined || Number(port) !== local) return void client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    const upstream = net.connect(local, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connects,
    requests,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
