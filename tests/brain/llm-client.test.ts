import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import nock from 'nock';
import { AnthropicLlmClient, STREAM_ABOVE_TOKENS } from '../../src/brain/anthropic-client';
import type { LlmRequest } from '../../src/brain/llm-client';
import { AppError } from '../../src/core/app-error';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../fakes/anthropic-server';
import { replyCall, type ScriptedAnswer } from '../fakes/anthropic-sse';

/** A request shaped like the brain's: a system block, one tool, one user message. */
const request = (maxTokens = 4096): LlmRequest => ({
  model: 'claude-opus-5-5',
  maxTokens,
  system: 'あなたは秘書です。',
  tools: [
    { name: 'reply', description: '', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  ],
  messages: [{ role: 'user', content: '[To:9999]Hishoさん\nおはよう' }],
});

const replyText = (content: unknown[]): unknown => (content.at(-1) as { input?: { text?: unknown } }).input?.text;

describe('AnthropicLlmClient over HTTP (the real SDK against a loopback Messages API)', () => {
  let server: FakeAnthropicServer;
  let next: ScriptedAnswer[] = [];
  const client = (timeoutMs = 5000) =>
    new AnthropicLlmClient({ apiKey: 'sk-ant-test', baseURL: server.url, timeoutMs, maxRetries: 0 });

  beforeAll(async () => {
    // Only loopback servers here. nock's interception of node:http passes each request through on a fresh
    // socket (it would hide what the keep-alive agent does), so it lets go of node:http for this file.
    nock.restore();
    server = await startFakeAnthropicServer(() => next.shift() ?? { status: 500, errorType: 'api_error' });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    next = [];
    server.requests.length = 0;
  });

  it('asks for a normal-sized answer in one plain request and reads the whole message', async () => {
    next = [replyCall('おはようございますウル🐺')];
    const res = await client().create(request());
    expect(server.requests[0]!.stream).toBe(false);
    expect(res.stopReason).toBe('tool_calls');
    expect(replyText(res.content)).toBe('おはようございますウル🐺');
    expect(res.usage).toEqual({ inputTokens: 900, outputTokens: 120, cacheWriteTokens: 0, cacheReadTokens: 2400 });
    expect(res.requestId).toMatch(/^req_\d+$/);
  });

  it('speaks the neutral port: thinking, tool calls and results go back to the API as the blocks it sent', async () => {
    next = [replyCall('はいウル'), replyCall('了解ウル')];
    const first = await client().create(request());
    expect(first.content.map((b) => b.type)).toEqual(['thinking', 'tool_call']);
    const call = first.content[1] as { id: string };
    await client().create({
      ...request(),
      messages: [
        ...request().messages,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', callId: call.id, content: 'denied', isError: true }] },
      ],
    });
    const [, assistant, user] = server.requests[1]!.messages as { content: unknown }[];
    expect(assistant!.content).toEqual([
      { type: 'thinking', thinking: '', signature: 'sig' },
      { type: 'tool_use', id: call.id, name: 'reply', input: expect.any(Object) },
    ]);
    expect(user!.content).toEqual([{ type: 'tool_result', tool_use_id: call.id, content: 'denied', is_error: true }]);
    expect(server.requests[1]!.system).toEqual([{ type: 'text', text: 'あなたは秘書です。' }]);
  });

  it(`streams an answer of more than ${STREAM_ABOVE_TOKENS} tokens and assembles the same message`, async () => {
    next = [replyCall('長い答えウル')];
    const res = await client().create(request(STREAM_ABOVE_TOKENS * 2));
    expect(server.requests[0]!.stream).toBe(true);
    expect(replyText(res.content)).toBe('長い答えウル');
    expect(res.requestId).toMatch(/^req_\d+$/);
  });

  it.each([
    ['a plain answer cut halfway by a closed connection', 4096, 'truncated'],
    ['a stream that ends abruptly inside a tool call', STREAM_ABOVE_TOKENS * 2, 'truncated'],
    ['a stream broken by an overloaded_error event', STREAM_ABOVE_TOKENS * 2, 'error_event'],
  ] as const)('%s is an error, never a partial answer', async (_name, maxTokens, kind) => {
    next = [{ streamBreak: kind }];
    const err = await client()
      .create(request(maxTokens))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('LLM_UNAVAILABLE');
  });

  it('a model that does not answer within the timeout is a timeout, also when the headers came first', async () => {
    // Headers at once, then nothing: the timeout must cover the body of a plain answer too.
    const slow = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"id":"msg_1",');
    });
    const sockets = new Set<Socket>();
    slow.on('connection', (s) => sockets.add(s));
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
    try {
      const c = new AnthropicLlmClient({ apiKey: 'sk-ant-test', baseURL: url, timeoutMs: 300, maxRetries: 0 });
      const started = Date.now();
      const err = await c.create(request()).catch((e: unknown) => e);
      expect((err as AppError).code).toBe('LLM_TIMEOUT');
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => slow.close(r));
    }
  });

  it('a proxy answering a status fetch cannot represent (600) is a model error, not a crash', async () => {
    const odd = http.createServer((_req, res) => {
      res.writeHead(600, { 'content-type': 'text/plain' });
      res.end('odd gateway');
    });
    await new Promise<void>((r) => odd.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
    try {
      const c = new AnthropicLlmClient({ apiKey: 'sk-ant-test', baseURL: url, timeoutMs: 2000, maxRetries: 0 });
      const err = await c.create(request()).catch((e: unknown) => e);
      expect((err as AppError).code).toBe('LLM_UNAVAILABLE');
    } finally {
      odd.closeAllConnections();
      await new Promise((r) => odd.close(r));
    }
  });

  it('a rate limit keeps its retry-after; the key never appears in the error', async () => {
    next = [{ status: 429, errorType: 'rate_limit_error', headers: { 'retry-after': '7' } }];
    const err = (await client()
      .create(request())
      .catch((e: unknown) => e)) as AppError;
    expect(err.code).toBe('LLM_RATE_LIMITED');
    expect(err.retryAfterMs).toBe(7000);
    expect(err.message).not.toContain('sk-ant-test');
  });

  it('calls in a row reuse one keep-alive connection', async () => {
    const counting = await startFakeAnthropicServer(() => replyCall('はいウル'));
    const c = new AnthropicLlmClient({ apiKey: 'sk-ant-test', baseURL: counting.url, timeoutMs: 5000, maxRetries: 0 });
    try {
      for (let i = 0; i < 3; i++) {
        const res = await c.create(request());
        expect(replyText(res.content)).toBe('はいウル');
      }
      expect(counting.count).toBe(3);
      expect(counting.connections).toBe(1);
    } finally {
      await counting.close();
    }
  });
});
