import type { Server } from 'node:http';
import express from 'express';

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

/**
 * A loopback ChatWork API (benchmarks and process tests): answers at once, timestamps every post, and lists
 * a room's messages (`GET /rooms/{id}/messages?force=1`) from what was posted, as the bot's own account.
 */
export async function startFakeChatwork(opts: FakeChatworkOptions = {}): Promise<{
  url: string;
  posts: FakeChatworkPost[];
  tasks: number;
  /** When each room's posting requests (messages and tasks) arrived (`performance.now()`). */
  roomPosts: Map<string, number[]>;
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
  const posted = (room: string) => {
    const now = performance.now();
    const list = roomPosts.get(room) ?? [];
    const since = now - (ROOM_POST_LIMIT.windowMs - 50);
    if (list.filter((t) => t > since).length >= ROOM_POST_LIMIT.max) state.overLimit++;
    list.push(now);
    roomPosts.set(room, list);
  };
  const bot = opts.botAccountId ?? 9999;
  const app = express();
  app.use(express.urlencoded({ extended: false }));
  let id = 1;
  const headers = (res: express.Response) =>
    res.set({ 'x-ratelimit-remaining': '299', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 300) });
  app.get('/v2/me', (_req, res) => {
    headers(res).json({ account_id: bot, name: 'Hisho' });
  });
  app.post('/v2/rooms/:room/messages', (req, res) => {
    posted(req.params.room);
    const post = {
      roomId: req.params.room,
      at: performance.now(),
      body: String(req.body.body ?? ''),
      messageId: String(id++),
      sendTime: Math.floor(Date.now() / 1000),
    };
    posts.push(post);
    if (opts.onPost?.(post) === 'hold') return;
    headers(res).json({ message_id: post.messageId });
  });
  app.get('/v2/rooms/:room/messages', (req, res) => {
    const list = posts
      .filter((p) => p.roomId === req.params.room)
      .slice(-100)
      .map((p) => ({
        message_id: p.messageId,
        account: { account_id: bot, name: 'Hisho', avatar_image_url: '' },
        body: p.body,
        send_time: p.sendTime,
        update_time: 0,
      }));
    if (list.length === 0) return void headers(res).status(204).end();
    headers(res).json(list);
  });
  // Room members (read for the persons context, once per room per TTL): the bot alone.
  app.get('/v2/rooms/:room/members', (_req, res) => {
    headers(res).json([{ account_id: bot, role: 'member', name: 'Hisho', chatwork_id: '', avatar_image_url: '' }]);
  });
  app.post('/v2/rooms/:room/tasks', (req, res) => {
    posted(req.params.room);
    state.tasks++;
    headers(res).json({ task_ids: [id++] });
  });
  const server: Server = await new Promise((r) => {
    const s = app.listen(0, '127.0.0.1', () => r(s));
  });
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/v2`,
    posts,
    get tasks() {
      return state.tasks;
    },
    roomPosts,
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
