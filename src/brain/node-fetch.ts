import { Readable } from 'node:stream';
import { toHeaders, transportFor } from '../core/keep-alive';

/** Statuses whose answer has no body (a `Response` refuses one). */
const NULL_BODY = new Set([204, 205, 304]);

const abortError = (): Error => Object.assign(new Error('the request was aborted (timeout)'), { name: 'AbortError' });

/**
 * The `fetch` the Anthropic SDK is given: node:http on the process's keep-alive agents instead of undici
 * (about 0.5 ms less CPU per model call, issue 10). A JSON answer is read whole before it is returned, so
 * the SDK's timeout (its abort signal) covers the body too; an event stream is handed over as it arrives.
 * An abort rejects with an `AbortError` (the SDK reports it as a timeout); a broken connection rejects with
 * node's error (the SDK reports it as a connection error and retries).
 */
export function nodeFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const u = new URL(input instanceof Request ? input.url : input);
  const { lib, agent } = transportFor(u);
  if (init.body != null && typeof init.body !== 'string')
    return Promise.reject(new TypeError('nodeFetch sends string bodies only (the SDK sends JSON text)'));
  const body = typeof init.body === 'string' ? Buffer.from(init.body, 'utf8') : undefined;
  const headers = Object.fromEntries(new Headers(init.headers));
  if (body) headers['content-length'] = String(body.length);
  const signal = init.signal ?? undefined;
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => reject(signal?.aborted ? abortError() : err);
    const req = lib.request(u, { method: init.method ?? 'GET', headers, agent, signal });
    req.on('error', fail);
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const answer = { status, statusText: res.statusMessage ?? '', headers: toHeaders(res.headers) };
      // A `Response` refuses statuses outside 200–599 (a broken proxy's 600): an error, never a throw here.
      const respond = (body: ConstructorParameters<typeof Response>[0]) => {
        try {
          resolve(new Response(body, answer));
        } catch (err) {
          res.destroy();
          fail(err as Error);
        }
      };
      if (NULL_BODY.has(status)) {
        res.resume();
        return respond(null);
      }
      if ((res.headers['content-type'] ?? '').startsWith('text/event-stream'))
        return respond(Readable.toWeb(res) as ReadableStream<Uint8Array>);
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => respond(Buffer.concat(chunks)));
      res.on('error', fail);
      res.on('aborted', () => fail(new Error('the connection closed before the answer was complete')));
    });
    req.end(body);
  });
}
