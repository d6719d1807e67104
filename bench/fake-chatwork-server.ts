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
export async function startFakeChatwork(
  opts: FakeChatworkOptions = {},
): Promise<{ url: string; posts: FakeChatworkPost[]; tasks: number; close(): Promise<void> }> {
  const posts: FakeChatworkPost[] = [];
  const state = { tasks: 0 };
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
  app.post('/v2/rooms/:room/tasks', (_req, res) => {
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
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
