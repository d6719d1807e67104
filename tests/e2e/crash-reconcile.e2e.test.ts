import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Client } from 'pg';
import { startFakeChatwork, type FakeChatworkPost } from '../../bench/fake-chatwork-server';
import { mentionDelivery, postWebhook } from '../helpers/chatwork';
import { createTestDatabase } from '../helpers/db';
import { CW_WEBHOOK_TOKEN, waitFor } from '../helpers/service';

/**
 * Issue 7 point 5, as an operator sees it: the service is SIGKILLed after its reply reached ChatWork but before
 * it recorded it as sent. The restarted service finds the reply in the room and does not post it again.
 */
describe('a crash between posting a reply and recording it', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  });

  function start(env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
    const child = fork(path.join(__dirname, '..', 'helpers', 'service-process.ts'), [], {
      execArgv: ['--import', 'tsx'],
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    children.push(child);
    return new Promise((resolve, reject) => {
      child.once('message', (m: { type: string; port: number }) => resolve({ child, port: m.port }));
      child.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
    });
  }

  it('SIGKILL after the post landed → the restarted service reconciles: one message, recorded once', async () => {
    const tdb = await createTestDatabase();
    const dbUrl = tdb.url;
    await tdb.close();
    let landed: ((p: FakeChatworkPost) => void) | null = null;
    const firstPost = new Promise<FakeChatworkPost>((r) => {
      landed = r;
    });
    // The first post lands in the room, and its answer never comes back: the process dies first.
    const cw = await startFakeChatwork({
      onPost: (p) => {
        if (!landed) return 'answer';
        landed(p);
        landed = null;
        return 'hold';
      },
    });
    const env = {
      NODE_ENV: 'test',
      PORT: '0',
      LOG_LEVEL: 'silent',
      DATABASE_URL: dbUrl,
      ANTHROPIC_API_KEY: 'sk-test-not-a-real-key-0000',
      CHATWORK_API_TOKEN: 'cw-crash-test-token',
      CHATWORK_WEBHOOK_TOKEN: CW_WEBHOOK_TOKEN,
      CHATWORK_API_BASE_URL: cw.url,
      WORK_CLAIM_TTL_MS: '1000',
      CONSOLE_ENABLED: 'false',
      LLM_DAILY_COST_LIMIT_USD: '0',
    };
    try {
      const a = await start(env);
      const d = mentionDelivery({ from: 1004, room: 5001, body: '[To:9999]Hishoさん\nこんにちは' });
      expect((await postWebhook(`http://127.0.0.1:${a.port}`, d.raw, d.signature)).status).toBe(200);
      const post = await firstPost;
      a.child.kill('SIGKILL');
      await new Promise((r) => a.child.once('exit', r));
      expect(post.body).toContain(`[rp aid=1004 to=5001-${d.messageId}]`);

      await start(env);
      const db = new Client({ connectionString: dbUrl });
      await db.connect();
      try {
        const item = `msg:chatwork:5001:${d.messageId}`;
        const done = await waitFor(
          async () =>
            (await db.query(`SELECT attempts FROM work_items WHERE "dedupeKey" = $1 AND state = 'done'`, [item]))
              .rows[0],
          15000,
          'item done after restart',
        );
        expect(done.attempts).toBe(2);
        await new Promise((r) => setTimeout(r, 500));
        expect(cw.posts).toHaveLength(1);
        const out = (
          await db.query(`SELECT status, "platformMessageId" FROM outbound_messages WHERE "dedupeKey" = $1`, [
            `reply:${item}`,
          ])
        ).rows[0];
        expect(out).toEqual({ status: 'sent', platformMessageId: post.messageId });
        const turns = (await db.query(`SELECT "reasonCode" FROM turn_records WHERE "roomId" = '5001'`)).rows;
        expect(turns).toEqual([{ reasonCode: 'O_RECONCILED' }]);
        const history = (
          await db.query(`SELECT text FROM conversation_messages WHERE "roomId" = '5001' AND role = 'assistant'`)
        ).rows;
        expect(history).toHaveLength(1);
        expect(history[0].text).toContain('こんにちはウル');
      } finally {
        await db.end();
      }
    } finally {
      await cw.close();
    }
  }, 60000);
});
