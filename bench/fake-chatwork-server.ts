import type { Server } from 'node:http';
import express from 'express';

/** A loopback ChatWork API that answers at once and timestamps every post (benchmarks only). */
export async function startFakeChatwork(): Promise<{ url: string; posts: { roomId: string; at: number; body: string }[]; tasks: number; close(): Promise<void> }> {
  const posts: { roomId: string; at: number; body: string }[] = [];
  const state = { tasks: 0 };
  const app = express();
  app.use(express.urlencoded({ extended: false }));
  let id = 1;
  const headers = (res: express.Response) => res.set({ 'x-ratelimit-remaining': '299', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 300) });
  app.get('/v2/me', (_req, res) => { headers(res).json({ account_id: 9999, name: 'Hisho' }); });
  app.post('/v2/rooms/:room/messages', (req, res) => {
    posts.push({ roomId: req.params.room, at: performance.now(), body: String(req.body.body ?? '') });
    headers(res).json({ message_id: String(id++) });
  });
  app.post('/v2/rooms/:room/tasks', (_req, res) => { state.tasks++; headers(res).json({ task_ids: [id++] }); });
  const server: Server = await new Promise((r) => { const s = app.listen(0, '127.0.0.1', () => r(s)); });
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/v2`, posts,
    get tasks() { return state.tasks; },
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
