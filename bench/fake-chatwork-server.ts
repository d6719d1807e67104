import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** One message the bot posted to the fake ChatWork API. */
export interface FakeChatworkPost {
  roomId: string;
  /** `performance.now()` when it arrived (benchmarks). */
  at: number;
  body: string;
  messageId: string;
  /** Epoch seconds, as ChatWork's `send_time`. */
  sendTime: number;
}

/** ChatWork's per-room posting limit (PLATFORMS.md A5): messages and tasks together, 10 per 10 s. */
export const ROOM_POST_LIMIT = { max: 10, windowMs: 10_000 };

/** Options of {@link startFakeChatwork}. */
export interface FakeChatworkOptions {
  /** The bot's account id (`GET /me`, and the author of every posted message). Default 9999. */
  botAccountId?: number;
  /** Called once a post has landed; return `'hold'` to never answer it (the poster is about to die). */
  onPost?: (post: FakeChatworkPost) => 'answer' | 'hold';
}

/** The routes of the API the service calls, under `/v2`. */
const ROUTE = /^\/v2\/(?:(me)|rooms\/(\d+)\/(messages|members|tasks))(?:\?(.*))?$/;

/**
 * A loopback ChatWork API (benchmarks and process tests): answers at once, timestamps every post, and lists
 * a room's messages (`GET /rooms/{id}/messages?force=1`) from what was posted, as the bot's own account.
 * Plain node:http: in the benchmark it shares the machine with the service, so it does as little as it can.
 */
export async function startFakeChatwork(opts: FakeChatworkOptions = {}): Promise<{
  url: string;
  posts: FakeChatworkPost[];
  tasks: number;
  /** When a room's posting requests (messages and tasks) of the last `windowMs` arrived (`performance.now()`). */
  recentPosts(room: string, windowMs: number): number[];
  /**
   * Posting requests that arrived when their room had had {@link ROOM_POST_LIMIT} in the window already, less
   * 50 ms of slack for the network (real ChatWork answers them 429; the client must pace itself).
   */
  overLimit: number;
  close(): Promise<void>;
}> {
  const posts: FakeChatworkPost[] = [];
  const state = { tasks: 0, overLimit: 0 };
  const roomPosts = new Map<string, number[]>();
  const bot = opts.botAccountId ?? 9999;
  let id = 1;
  const recentPosts = (room: string, windowMs: number) => {
    const since = performance.now() - windowMs;
    return (roomPosts.get(room) ?? []).filter((t) => t > since);
  };
  const posted = (room: string) => {
    if (recentPosts(room, ROOM_POST_LIMIT.windowMs - 50).length >= ROOM_POST_LIMIT.max) state.overLimit++;
    const list = roomPosts.get(room) ?? [];
    list.push(performance.now());
    roomPosts.set(room, list);
  };
  const send = (res: ServerResponse, status: number, json?: unknown) => {
    const body = json === undefined ? '' : JSON.stringify(json);
    res.writeHead(status, {
      'x-ratelimit-remaining': '299',
      'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 300),
      ...(json === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' }),
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  };
  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const m = ROUTE.exec(req.url ?? '');
    const method = req.method ?? 'GET';
    if (!m) return send(res, 404, { errors: ['Not found'] });
    const [, me, room, what] = m;
    if (me && method === 'GET') return send(res, 200, { account_id: bot, name: 'Hisho' });
    if (what === 'messages' && method === 'POST') {
      posted(room!);
      const post = {
        roomId: room!,
        at: performance.now(),
        body: new URLSearchParams(raw).get('body') ?? '',
        messageId: String(id++),
        sendTime: Math.floor(Date.now() / 1000),
      };
      posts.push(post);
      if (opts.onPost?.(post) === 'hold') return;
      return send(res, 200, { message_id: post.messageId });
    }
    if (what === 'messages' && method === 'GET') {
      const list = posts
        .filter((p) => p.roomId === room)
        .slice(-100)
        .map((p) => ({
          message_id: p.messageId,
          account: { account_id: bot, name: 'Hisho', avatar_image_url: '' },
          body: p.body,
          send_time: p.sendTime,
          update_time: 0,
        }));
      return list.length === 0 ? send(res, 204) : send(res, 200, list);
    }
    // Room members (read for the persons context, once per room per TTL): the bot alone.
    if (what === 'members' && method === 'GET')
      return send(res, 200, [
        { account_id: bot, role: 'member', name: 'Hisho', chatwork_id: '', avatar_image_url: '' },
      ]);
    if (what === 'tasks' && method === 'POST') {
      posted(room!);
      state.tasks++;
      return send(res, 200, { task_ids: [id++] });
    }
    send(res, 404, { errors: ['Not found'] });
  };
  const server: Server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => handle(req, res, raw));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/v2`,
    posts,
    get tasks() {
      return state.tasks;
    },
    recentPosts,
    get overLimit() {
      return state.overLimit;
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
