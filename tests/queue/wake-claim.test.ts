import type { InboundMessage } from '../../src/core/chat';
import { Intake } from '../../src/adapters/intake';
import type { ClaimedItem, WorkQueue } from '../../src/queue/work-queue';
import { WorkerPool, type WorkHandler } from '../../src/queue/worker-pool';
import { silentLogger } from '../../src/observability/logger';
import { says } from '../fakes/fake-brain';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { consoleMessage, createTestPipeline, type TestPipeline } from '../helpers/pipeline';

/**
 * A stored message wakes one idle loop, which claims in order (`claim_work_item`): the oldest runnable item, first
 * in its conversation. A message another worker holds is not taken again, and a 「はい」 never overtakes its request.
 */
describe('claiming the message a wake-up was for', () => {
  let t: TestDatabase;
  let p: TestPipeline;

  beforeAll(async () => {
    t = await createTestDatabase();
    p = await createTestPipeline(t);
  });
  afterAll(() => t.close());

  const itemRow = (id: bigint) => t.db.workItem.findUniqueOrThrow({ where: { id } });
  const stored = (text: string) =>
    t.db.workItem.findFirstOrThrow({ where: { type: 'user_request' }, orderBy: { id: 'desc' } }).then((w) => {
      expect((w.payload as { text?: string }).text).toBe(text);
      return w.id;
    });

  /**
   * One loop running user requests with `handler`, woken by an intake that stores messages; returns once the loop's
   * first look at the (empty) queue is over.
   */
  async function started(handler: WorkHandler): Promise<{ pool: WorkerPool; intake: Intake }> {
    const pool = onePool(p.queue, handler);
    const intake = new Intake(p.queue, () => pool.wake());
    pool.start();
    await new Promise((r) => setTimeout(r, 200));
    return { pool, intake };
  }

  it('a woken loop claims the message and answers it', async () => {
    const ran: ClaimedItem[] = [];
    const { pool, intake } = await started(async (item) => {
      ran.push(item);
      p.brain.script(says('こんにちはウル！'));
      return p.runner.handleUserRequest(item);
    });
    try {
      await intake.accept(consoleMessage('こんにちは', { roomId: 'console-general', senderAccountId: 'tanaka-taro' }));
      const id = await stored('こんにちは');
      await waitUntil(async () => ran.length === 1 && (await itemRow(id)).state === 'done');
      expect(ran.map((i) => i.id)).toEqual([id]);
      expect(p.sender.sent.at(-1)!.text).toBe('こんにちはウル！');
      expect(await t.db.turnRecord.count({ where: { workItemId: id } })).toBe(1);
    } finally {
      await pool.stop(2000);
    }
  });

  it('a message another worker holds is not taken again', async () => {
    await new Intake(p.queue).accept(
      consoleMessage('資料はどこ？', { senderAccountId: 'suzuki-kenji', senderName: '鈴木健二' }),
    );
    const id = await stored('資料はどこ？');
    const other = await p.queue.claim(['user_request']);
    expect(other?.id).toBe(id);
    expect(await p.queue.claim(['user_request'])).toBeNull();
    expect(await itemRow(id)).toMatchObject({ state: 'running', attempts: 1, claimedBy: other!.claimToken });
    await p.queue.complete(other!);
  });

  it('a 「はい」 behind its request waits, so the request’s turn does not see it', async () => {
    const intake = new Intake(p.queue);
    await intake.accept(consoleMessage('田中さんに見積書をお願いしたいかも', { senderAccountId: 'sato-misaki' }));
    const request = await stored('田中さんに見積書をお願いしたいかも');
    await intake.accept(consoleMessage('はい', { senderAccountId: 'sato-misaki' }));
    const answer = await stored('はい');

    const item = await p.queue.claim(['user_request']);
    expect(item?.id).toBe(request);
    expect(await p.queue.claim(['user_request'])).toBeNull();
    expect(await itemRow(answer)).toMatchObject({ state: 'queued', attempts: 0 });

    p.brain.script(says('承知したウル。'));
    await p.runner.handleUserRequest(item!);
    expect(p.brain.asked.at(-1)!.ctx.history.map((h) => h.text)).not.toContain('はい');
    // Now the 「はい」 is first in its conversation.
    const yes = await p.queue.claim(['user_request']);
    expect(yes?.id).toBe(answer);
    p.brain.script(says('了解ウル。'));
    expect(await p.runner.handleUserRequest(yes!)).toEqual({ completed: true });
  });

  it('wake-ups that find every loop busy are all answered afterwards, each conversation in order', async () => {
    const ran: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const { pool, intake } = await started(async (item) => {
      const text = (item.payload as InboundMessage).text;
      ran.push(text);
      if (text === '最初') await held; // the only loop is busy while the next two arrive
      p.brain.script(says('了解ウル。'));
      return p.runner.handleUserRequest(item);
    });
    try {
      await intake.accept(consoleMessage('最初', { senderAccountId: 'kato-ryo', senderName: '加藤亮' }));
      const first = await stored('最初');
      await waitUntil(() => ran.length === 1);
      // Both arrive while the loop is busy: one from another sender, one from the same (behind the first).
      await intake.accept(consoleMessage('次', { senderAccountId: 'watanabe-sho', senderName: '渡辺翔' }));
      await intake.accept(consoleMessage('最後', { senderAccountId: 'kato-ryo', senderName: '加藤亮' }));
      release();
      await waitUntil(async () => (await t.db.workItem.count({ where: { id: { gte: first }, state: 'done' } })) === 3);
      expect(ran).toEqual(['最初', '次', '最後']);
    } finally {
      await pool.stop(2000);
    }
  });
});

/** One loop over `queue` running user requests with `handler`; it polls only once a minute. */
function onePool(queue: WorkQueue, handler: WorkHandler): WorkerPool {
  return new WorkerPool({
    queue,
    concurrency: 1,
    pollMs: 60_000,
    claimTtlMs: 60_000,
    logger: silentLogger(),
    describeError: () => ({ text: 'x', retryable: false }),
    handlers: { user_request: handler },
  });
}

async function waitUntil(ok: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
