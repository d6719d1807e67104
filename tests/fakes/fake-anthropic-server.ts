import http from 'node:http';
import { replyCall, sse, type ScriptedAnswer } from './fake-anthropic';

/**
 * A loopback Messages API for service processes started by a test (nock cannot reach another process).
 * Every request gets `answer(body)` (default: a short persona reply) after `delayMs`.
 */
export async function startFakeAnthropicServer(
  opts: { delayMs?: number; answer?: (body: Record<string, unknown>) => ScriptedAnswer } = {},
): Promise<{
  url: string;
  requests: Record<string, unknown>[];
  close(): Promise<void>;
}> {
  const requests: Record<string, unknown>[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += String(c);
    });
    req.on('end', () => {
      const body = JSON.parse(raw || '{}') as Record<string, unknown>;
      requests.push(body);
      const answer = opts.answer?.(body) ?? replyCall('期限の近いタスクがあるウル！今日のうちに確認してほしいウル🐺');
      setTimeout(() => {
        if (!('content' in answer)) {
          res
            .writeHead(500, { 'content-type': 'application/json' })
            .end('{"type":"error","error":{"type":"api_error","message":"scripted"}}');
          return;
        }
        res
          .writeHead(200, { 'content-type': 'text/event-stream', 'request-id': `req_srv_${requests.length}` })
          .end(sse(answer, String(body.model ?? 'claude-opus-5-5')));
      }, opts.delayMs ?? 0);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
