import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { okBody, searchFirst, toolSearchProblem, type ScriptedAnswer } from './anthropic-sse';

/** The parts of a Messages API request body the fakes read. */
export interface MessagesRequest {
  model: string;
  system?: { type: string; text: string }[];
  tools?: { name: string; defer_loading?: boolean }[];
  messages: { role: string; content: unknown }[];
  [key: string]: unknown;
}

/** Decides the answer to one request (the n-th, from 1). */
export type Responder = (req: MessagesRequest, n: number) => ScriptedAnswer | Promise<ScriptedAnswer>;

export interface FakeAnthropicServer {
  /** Base URL for `ANTHROPIC_BASE_URL` (the SDK appends `/v1/messages`). */
  url: string;
  /** Requests received so far. */
  readonly count: number;
  /** TCP connections opened to it so far (a keep-alive client opens one for calls in a row). */
  readonly connections: number;
  readonly requests: MessagesRequest[];
  /** The bodies of `requests` exactly as they arrived (the bytes, decoded as UTF-8). */
  readonly bodies: string[];
  close(): Promise<void>;
}

export interface FakeAnthropicServerOptions {
  /** Delay before every answer (a slow model); may be changed while running. */
  delayMs?: () => number;
  /** Keep request bodies (off for long load runs). */
  record?: boolean;
  /**
   * Model the API's prompt cache: the usage of each answer reports `cache_read_input_tokens` for the longest
   * prefix (tools → system → messages, up to a block marked `cache_control`) seen before, and
   * `cache_creation_input_tokens` for the rest up to the last breakpoint (see {@link PromptCache}).
   */
  promptCache?: PromptCache;
  /** Called with each successful answer's usage and the request it answers (benchmarks add them up). */
  onUsage?: (usage: CacheUsage, req: MessagesRequest) => void;
}

/** The token counts of one answer, as the Messages API reports them. */
export interface CacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/**
 * Rough token count of text: ASCII about 4 characters a token, other characters (Japanese) about one each.
 * Only ratios (the cache-read share) are read from it.
 */
export function estimateTokens(text: string): number {
  let ascii = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 128) ascii++;
  return Math.ceil(ascii / 4) + (text.length - ascii);
}

/**
 * The prompt cache as the API documents it: a prefix is cached at each `cache_control` breakpoint (tools,
 * then system blocks, then message blocks, in that order) when it is at least `minTokens` long; a later
 * request reads the longest cached prefix that is byte-identical. Entries do not expire here (the API
 * keeps them 5 minutes after their last use; `clear()` starts cold).
 */
export class PromptCache {
  private readonly seen = new Set<string>();
  /**
   * While paused, answers report a fixed usage and nothing is hashed (a benchmark's load phases: estimating
   * took the load generator ≈ 0.5 ms of CPU per request, on the cores the service under test runs on).
   */
  paused = false;
  constructor(readonly minTokens = 1024) {}

  clear(): void {
    this.seen.clear();
  }

  usage(req: MessagesRequest): CacheUsage {
    const segments: { text: string; breakpoint: boolean }[] = [];
    const add = (block: unknown) =>
      segments.push({
        text: JSON.stringify(block),
        breakpoint: !!(block as { cache_control?: unknown }).cache_control,
      });
    // Deferred tools are not part of the prompt until a tool_reference loads them (in the messages).
    for (const t of req.tools ?? []) if (!t.defer_loading) add(t);
    for (const b of req.system ?? []) add(b);
    for (const m of req.messages) {
      if (typeof m.content === 'string') add({ role: m.role, text: m.content });
      else for (const b of (m.content as unknown[]) ?? []) add(b);
    }
    const hash = createHash('sha256');
    let tokens = 0;
    let read = 0;
    let lastBreakpoint = 0;
    const prefixes: string[] = [];
    for (const seg of segments) {
      hash.update(seg.text);
      hash.update('\u0000');
      tokens += estimateTokens(seg.text);
      if (!seg.breakpoint || tokens < this.minTokens) continue;
      const key = hash.copy().digest('hex');
      if (this.seen.has(key)) read = tokens;
      prefixes.push(key);
      lastBreakpoint = tokens;
    }
    for (const k of prefixes) this.seen.add(k);
    const write = Math.max(0, lastBreakpoint - read);
    return { input_tokens: tokens - read - write, cache_creation_input_tokens: write, cache_read_input_tokens: read };
  }
}

const json = (res: http.ServerResponse, status: number, body: object, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_fake', ...headers });
  res.end(JSON.stringify(body));
};

/**
 * A loopback Anthropic Messages API over real HTTP, for code that runs the SDK in another process or
 * without nock (the service as a child process, `npm run eval` against a fake). It answers streamed
 * and plain requests like the real API (PLATFORMS.md C10): Bearer or x-api-key auth, no sampling parameters,
 * deferred tools referenced and called only as the API allows. When the responder's answer calls a deferred tool
 * the request has not loaded, the fake model searches first (`find_tools`) and gives that answer once the search
 * result loaded the tool: responders never see the search turns.
 */
export async function startFakeAnthropicServer(
  respond: Responder,
  o: FakeAnthropicServerOptions = {},
): Promise<FakeAnthropicServer> {
  const requests: MessagesRequest[] = [];
  const bodies: string[] = [];
  let count = 0;
  /** Answers waiting for the search the fake model made first (by the search call's id). */
  const searched = new Map<string, ScriptedAnswer>();
  const resumeAfterSearch = (req: MessagesRequest): ScriptedAnswer | null => {
    const last = req.messages.at(-1);
    for (const b of Array.isArray(last?.content) ? (last.content as { tool_use_id?: string }[]) : []) {
      const waiting = b.tool_use_id ? searched.get(b.tool_use_id) : undefined;
      if (waiting) {
        searched.delete(b.tool_use_id!);
        return waiting;
      }
    }
    return null;
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages'))
          return json(res, 404, { type: 'error', error: { type: 'not_found_error', message: 'not found' } });
        const auth = req.headers.authorization ?? req.headers['x-api-key'];
        if (!auth)
          return json(
            res,
            401,
            { type: 'error', error: { type: 'authentication_error', message: 'missing key' } },
            { 'x-should-retry': 'false' },
          );
        const raw = Buffer.concat(chunks).toString('utf8');
        const body = JSON.parse(raw) as MessagesRequest;
        if (['temperature', 'top_p', 'top_k'].some((k) => k in body)) {
          return json(
            res,
            400,
            {
              type: 'error',
              error: { type: 'invalid_request_error', message: 'sampling parameters are not supported' },
            },
            { 'x-should-retry': 'false' },
          );
        }
        const n = ++count;
        if (o.record !== false) {
          requests.push(body);
          bodies.push(raw);
        }
        const problem = toolSearchProblem(body);
        if (problem)
          return json(
            res,
            400,
            { type: 'error', error: { type: 'invalid_request_error', message: problem } },
            { 'x-should-retry': 'false' },
          );
        const resumed = resumeAfterSearch(body);
        let answer = resumed ?? (await respond(body, n));
        const search = searchFirst(answer, body);
        if (search) {
          searched.set((search.content[1] as { id: string }).id, answer);
          answer = search;
        }
        const delay = o.delayMs?.() ?? 0;
        if (delay > 0) await new Promise((r) => setTimeout(r, delay));
        if ('hangMs' in answer)
          return void setTimeout(() => json(res, 500, {}, { 'x-should-retry': 'false' }), answer.hangMs).unref();
        if ('status' in answer) {
          if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
          return json(
            res,
            answer.status,
            { type: 'error', error: { type: answer.errorType, message: 'scripted' }, request_id: 'req_fake' },
            answer.headers,
          );
        }
        if ('streamBreak' in answer) {
          const broken = okBody(answer, body, body.model);
          if (!broken.cut) {
            res.writeHead(200, { 'content-type': broken.contentType });
            return void res.end(broken.text);
          }
          // Not streamed: half of the message arrives, then the connection closes.
          const half = Buffer.from(broken.text);
          res.writeHead(200, { 'content-type': broken.contentType, 'content-length': String(half.length * 2) });
          res.write(half);
          return void setTimeout(() => res.destroy(), 20);
        }
        let scripted = answer;
        if (o.promptCache || o.onUsage) {
          const usage = (o.promptCache?.paused ? null : o.promptCache?.usage(body)) ?? {
            input_tokens: 900,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 2400,
          };
          o.onUsage?.(usage, body);
          if (o.promptCache) scripted = { ...answer, usage: { ...usage, ...answer.usage } };
        }
        const ok = okBody(scripted, body, body.model);
        res.writeHead(200, { 'content-type': ok.contentType, 'request-id': ok.requestId ?? 'req_fake' });
        res.end(ok.text);
      })().catch((err: Error) => {
        if (!res.headersSent)
          json(
            res,
            500,
            { type: 'error', error: { type: 'api_error', message: err.message } },
            { 'x-should-retry': 'false' },
          );
        else res.destroy();
      });
    });
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get count() {
      return count;
    },
    get connections() {
      return connections;
    },
    requests,
    bodies,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * The text of the last user message of a request: string content, or the last text block (the current
 * message comes after the context block); a turn of tool results gives ''.
 */
export function lastUserText(req: MessagesRequest): string {
  const last = req.messages.at(-1);
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  const blocks = Array.isArray(last.content) ? (last.content as { type?: string; text?: string }[]) : [];
  if (blocks.some((b) => b.type === 'tool_result')) return '';
  return blocks.filter((b) => b.type === 'text').at(-1)?.text ?? '';
}

/** True when the request carries tool results (a later step of a turn). */
export function hasToolResult(req: MessagesRequest): boolean {
  const last = req.messages.at(-1);
  return Array.isArray(last?.content) && (last.content as { type?: string }[]).some((b) => b.type === 'tool_result');
}
