import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The smallest reverse proxy that makes two instances lose nothing while one restarts: it forwards a
 * webhook to one instance and, when that one does not answer (connection refused or reset) or answers
 * 502/503, sends the same bytes to the other. Retrying is safe because the intake is idempotent by
 * ChatWork message id. (In production: nginx `proxy_next_upstream error timeout http_502 http_503
 * non_idempotent;` or any load balancer that retries a failed POST on another backend.)
 */
export async function startFailoverProxy(
  targets: () => string[],
): Promise<{ url: string; retried: number; close(): Promise<void> }> {
  const state = { next: 0, retried: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const list = targets();
        const start = state.next++ % list.length;
        for (let k = 0; k < list.length; k++) {
          const base = list[(start + k) % list.length]!;
          try {
            const headers: Record<string, string> = {};
            for (const [h, v] of Object.entries(req.headers))
              if (typeof v === 'string' && h !== 'host' && h !== 'content-length') headers[h] = v;
            const r = await fetch(`${base}${req.url}`, {
              method: req.method,
              headers,
              body: req.method === 'GET' ? undefined : body,
              signal: AbortSignal.timeout(10000),
            });
            if ((r.status === 502 || r.status === 503) && k < list.length - 1) {
              state.retried++;
              continue;
            }
            res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'text/plain' });
            res.end(Buffer.from(await r.arrayBuffer()));
            return;
          } catch {
            state.retried++;
          }
        }
        res.writeHead(502).end('no instance answered');
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get retried() {
      return state.retried;
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
