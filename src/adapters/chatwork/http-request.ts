import { outboundRequest, toHeaders } from '../../core/outbound-http';

/** What the ChatWork client reads of an HTTP answer (the subset of fetch's `Response` it used). */
export interface HttpAnswer {
  status: number;
  ok: boolean;
  headers: Headers;
  /** The body; rejects when the connection breaks or the timeout fires while it is read. */
  text(): Promise<string>;
}

/**
 * One HTTP request over the process's keep-alive agents and proxy (node:http, not fetch: see core/outbound-http.ts).
 * Network errors reject with node's error (its `code`: ECONNREFUSED, ECONNRESET …); the
 * timeout covers the whole exchange, body included, and rejects with a `TimeoutError` (as fetch with
 * `AbortSignal.timeout` did).
 */
export function httpRequest(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; timeoutMs: number },
): Promise<HttpAnswer> {
  const u = new URL(url);
  const body = init.body === undefined ? undefined : Buffer.from(init.body, 'utf8');
  const headers = { ...init.headers, ...(body ? { 'content-length': String(body.length) } : {}) };
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const req = outboundRequest(u, { method: init.method, headers });
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(Object.assign(new Error(`timed out after ${init.timeoutMs} ms`), { name: 'TimeoutError' }));
    }, init.timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      const text = new Promise<string>((ok, fail) => {
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          clearTimeout(timer);
          ok(Buffer.concat(chunks).toString('utf8'));
        });
        res.on('error', (err) => {
          clearTimeout(timer);
          fail(err);
        });
        res.on('aborted', () => fail(new Error(timedOut ? 'timed out while reading' : 'connection closed early')));
      });
      text.catch(() => undefined); // read or not, a broken body must not become an unhandled rejection
      const status = res.statusCode ?? 0;
      resolve({ status, ok: status >= 200 && status < 300, headers: toHeaders(res.headers), text: () => text });
    });
    req.end(body);
  });
}
