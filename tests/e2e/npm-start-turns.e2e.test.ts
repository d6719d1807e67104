import { startFakeChatwork } from '../../bench/fake-chatwork-server';
import { createDb, type Db } from '../../src/db/prisma';
import { startFakeAnthropicServer, hasToolResult, lastUserText } from '../fakes/anthropic-server';
import { replyCall, toolCall } from '../fakes/anthropic-sse';
import { mentionDelivery, postWebhook } from '../helpers/chatwork';
import { createTestDatabase } from '../helpers/db';
import { runService, type ServiceProcess } from '../helpers/process';
import { CW_WEBHOOK_TOKEN, TEST_API_KEY, waitFor } from '../helpers/service';

/**
 * The service as `npm start` runs it: one process takes webhooks and runs the turns (claimed from the durable
 * queue by its own worker pool), posts to ChatWork and calls its tasks API; SIGTERM lets a turn that is running
 * finish before the process exits. Variables of the removed worker threads, still set by an old configuration, are
 * ignored with a warning.
 */
describe('the service as npm start runs it (turns in its own process)', () => {
  let proc: ServiceProcess;
  let db: Db;
  let delayMs = 0;
  let llm: Awaited<ReturnType<typeof startFakeAnthropicServer>>;
  let cw: Awaited<ReturnType<typeof startFakeChatwork>>;

  beforeAll(async () => {
    const t = await createTestDatabase();
    await t.close();
    llm = await startFakeAnthropicServer(
      (req) => {
        const text = lastUserText(req);
        if (!hasToolResult(req) && text.includes('タスク'))
          return toolCall('create_task', { assignee: '田中太郎', title: '見積書の作成', due: '明日' });
        if (hasToolResult(req)) return replyCall('田中太郎さんに「見積書の作成」をお願いしたウル！');
        return replyCall('プロセスから答えるウル！ほかに手伝うことはあるウル？');
      },
      { delayMs: () => delayMs },
    );
    cw = await startFakeChatwork();
    db = createDb({ url: t.url, poolMax: 2 });
    proc = runService({
      DATABASE_URL: t.url,
      PORT: '0',
      // Left over from an older configuration: ignored, with one warning each.
      WORKERS: '1',
      INTAKE_YIELD_AT: '16',
      ANTHROPIC_API_KEY: TEST_API_KEY,
      ANTHROPIC_BASE_URL: llm.url,
      LLM_MAX_RETRIES: '0',
      LLM_DAILY_COST_LIMIT_USD: '0',
      SELF_CRITIQUE_RATE: '0',
      CHATWORK_API_TOKEN: 'cw-token-for-tests-000',
      CHATWORK_WEBHOOK_TOKEN: CW_WEBHOOK_TOKEN,
      CHATWORK_API_BASE_URL: cw.url,
      LOG_LEVEL: 'info',
    });
    await proc.ready;
  }, 60000);
  afterAll(async () => {
    if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
    await db.$disconnect();
    await llm.close();
    await cw.close();
  });

  const url = () => `http://127.0.0.1:${/listening on http:\/\/localhost:(\d+)/.exec(proc.output())![1]}`;

  it('starts although retired variables are set, naming each once as no longer used', async () => {
    // pino writes asynchronously: the lines may follow the "listening" line.
    const warned = (name: string) =>
      proc
        .output()
        .split('\n')
        .filter((l) => l.includes(`"variable":"${name}"`) && l.includes('no longer used'));
    await waitFor(() => warned('INTAKE_YIELD_AT').length > 0, 5000, 'warning for INTAKE_YIELD_AT');
    expect(warned('WORKERS')).toHaveLength(1);
    expect(warned('INTAKE_YIELD_AT')).toHaveLength(1);
    expect(warned('WORKER_NICE')).toHaveLength(0);
  });

  it('acknowledges a mention and answers it', async () => {
    const d = mentionDelivery({ from: 1004, room: 5001, body: '[To:9999]ソウルくん こんにちは' });
    const res = await postWebhook(url(), d.raw, d.signature);
    expect(res.status).toBe(200);
    const post = await waitFor(() => cw.posts.find((p) => p.body.includes('プロセスから答えるウル')), 15000, 'reply');
    expect(post.roomId).toBe('5001');
    expect(post.body).toContain(`[rp aid=1004 to=5001-${d.messageId}]`);
    await waitFor(
      () => db.workItem.findFirst({ where: { dedupeKey: `msg:chatwork:5001:${d.messageId}`, state: 'done' } }),
      5000,
      'work item done',
    );
    // Posted once.
    const posted = proc
      .output()
      .split('\n')
      .filter((l) => l.includes('chatwork.send.posted') && l.includes(`"messageId":"${post.messageId}"`));
    expect(posted).toHaveLength(1);
    // The turn and the webhook are both counted in /metrics.
    const text = await (await fetch(`${url()}/metrics`)).text();
    expect(text).toMatch(/hisho_turns_total\{[^}]*\} [1-9]/);
    expect(text).toMatch(/hisho_webhook_requests_total\{[^}]*status="200"[^}]*\} [1-9]/);
  }, 30000);

  it('runs a tool that creates a ChatWork task', async () => {
    const before = cw.tasks;
    const d = mentionDelivery({ from: 1003, room: 5001, body: '[To:9999]田中太郎さんに見積書の作成のタスクをお願い' });
    expect((await postWebhook(url(), d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.find((p) => p.body.includes('見積書の作成')), 15000, 'tool reply');
    expect(cw.tasks).toBe(before + 1);
    expect(await db.task.count({ where: { title: '見積書の作成', assigneeMemberId: 'tanaka-taro' } })).toBe(1);
  }, 30000);

  it('finishes the running turn on SIGTERM, then exits 0 within 10 s', async () => {
    delayMs = 2000;
    const seen = llm.count;
    const d = mentionDelivery({ from: 1004, room: 5001, body: '[To:9999]ソウルくん 終了前の質問' });
    expect((await postWebhook(url(), d.raw, d.signature)).status).toBe(200);
    await waitFor(() => llm.count > seen, 10000, 'model asked');
    const posted = cw.posts.length;
    const t0 = Date.now();
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10000);
    // The turn that was waiting for the model was answered before the exit, exactly once.
    const replies = cw.posts.slice(posted).filter((p) => p.body.includes(`to=5001-${d.messageId}]`));
    expect(replies).toHaveLength(1);
    const item = await db.workItem.findFirst({ where: { dedupeKey: `msg:chatwork:5001:${d.messageId}` } });
    expect(item?.state).toBe('done');
  }, 30000);
});
