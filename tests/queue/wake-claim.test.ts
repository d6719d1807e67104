import type { InboundMessage } from '../../src/core/chat';
import { Intake } from '../../src/adapters/intake';
import type { ClaimedItem, WorkQueue } from '../../src/queue/work-queue';
import { WorkerPool, type WorkHandler } from '../../src/queue/worker-pool';
import { silentLogger } from '../../src/observability/logger';
import { says } from '../fakes/fake-brain';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { consoleMessage, createTestPipeline, type TestPipeline } from '../helpers/pipeline';

/**
 * A wake-up names the stored message; the woken loop claims it by id (one cheap statement on the primary key). A
 * message another worker holds, or one that waits behind an older message of its conversation, is not taken that
 * way, and the loop claims in order as usual: a 「はい」 never overtakes its request.
 */
describe('claiming the message a wake-up names', () => {
  let t: TestDatabase;
  let p: TestPipeline;
  let byId: bigint[];
  let ordered: number;
  let restore: () => void;

  beforeAll(async () => {
    t = await createTestDatabase();
    p = await createTestPipeline(t);
  });
  afterAll(() => t.close());
  beforeEach(() => {
    byId = [];
    ordered = 0;
    const q = p.queue;
    const [claim, claimById] = [q.claim.bind(q), q.claimById.bind(q)];
    q.claim = async (types) => {
      const got = await claim(types);
      if (got) ordered++;
      return got;
    };
    q.claimById = async (id, types) => {
      const got = await claimById(id, types);
      if (got) byId.push(id);
      return got;
    };
    restore = () => {
      q.claim = claim;
      q.claimById = claimById;
    };
  });
  afterEach(() => restore());

  const itemRow = (id: bigint) => t.db.workItem.findUniqueOrThrow({ where: { id } });

  /**
   * One loop running user requests with `handler`, woken by an intake that stores messages; returns once the loop's
   * first look at the (empty) queue is over. `ids`: the stored items, in order.
   */
  async function started(handler: WorkHandler): Promise<{ pool: WorkerPool; intake: Intake; ids: bigint[] }> {
    const pool = onePool(p.queue, handler);
    const ids: bigint[] = [];
    const intake = new Intake(p.queue, (h) => {
      ids.push(h.itemId!);
      pool.wake(h);
    });
    pool.start();
    await new Promise((r) => setTimeout(r, 200));
    return { pool, intake, ids };
  }

  it('a woken loop takes the named message by id and answers it', async () => {
    const ran: ClaimedItem[] = [];
    const { pool, intake, ids } = await started(async (item) => {
      ran.push(item);
      p.brain.script(says('こんにちはウル！'));
      return p.runner.handleUserRequest(item);
    });
    try {
      await intake.accept(consoleMessage('こんにちは', { roomId: 'console-general', senderAccountId: 'tanaka-taro' }));
      await waitUntil(async () => ran.length === 1 && (await itemRow(ids[0]!)).state === 'done');
      expect(byId).toEqual(ids);
      expect(ordered).toBe(0);
      expect(p.sender.sent.at(-1)!.text).toBe('こんにちはウル！');
      expect(await t.db.turnRecord.count({ where: { workItemId: ids[0]! } })).toBe(1);
    } finally {
      await pool.stop(2000);
    }
  });

  it('a message another worker holds is not taken again', async () => {
    const ids: bigint[] = [];
    const intake = new Intake(p.queue, (h) => ids.push(h.itemId!));
    await intake.accept(consoleMessage('資料はどこ？', { senderAccountId: 'suzuki-kenji', senderName: '鈴木健二' }));
    const other = await p.queue.claimById(ids[0]!, ['user_request']);
    expect(other).not.toBeNull();
    expect(await p.queue.claimById(ids[0]!, ['user_request'])).toBeNull();
    expect(await itemRow(ids[0]!)).toMatchObject({ state: 'running', attempts: 1, claimedBy: other!.claimToken });
    await p.queue.complete(other!);
  });

  it('a 「はい」 behind its request waits, so the request’s turn does not see it', async () => {
    const ids: bigint[] = [];
    const intake = new Intake(p.queue, (h) => ids.push(h.itemId!));
    await intake.accept(consoleMessage('田中さんに見積書をお願いしたいかも', { senderAccountId: 'sato-misaki' }));
    await intake.accept(consoleMessage('はい', { senderAccountId: 'sato-misaki' }));
    const [request, answer] = ids as [bigint, bigint];

    expect(await p.queue.claimById(answer, ['user_request'])).toBeNull();
    expect(await itemRow(answer)).toMatchObject({ state: 'queued', attempts: 0 });

    const item = await p.queue.claimById(request, ['user_request']);
    p.brain.script(says('承知したウル。'));
    await p.runner.handleUserRequest(item!);
    expect(p.brain.asked.at(-1)!.ctx.history.map((h) => h.text)).not.toContain('はい');
    // Now the 「はい」 is first in its conversation.
    const yes = await p.queue.claimById(answer, ['user_request']);
    expect(yes).not.toBeNull();
    p.brain.script(says('了解ウル。'));
    expect(await p.runner.handleUserRequest(yes!)).toEqual({ completed: true });
  });

  it('when the named claim takes nothing, the loop claims in order and still finds the message', async () => {
    const ran: string[] = [];
    const q = p.queue;
    const claimById = q.claimById;
    q.claimById = async () => null; // as if another worker had looked first and let it go
    const { pool, intake } = await started(async (item) => {
      ran.push((item.payload as InboundMessage).text);
      p.brain.script(says('了解ウル。'));
      return p.runner.handleUserRequest(item);
    });
    try {
      await intake.accept(consoleMessage('一つ目', { senderAccountId: 'ito-yui', senderName: '伊藤結衣' }));
      await waitUntil(() => ran.length === 1);
      expect(ran).toEqual(['一つ目']);
      expect(ordered).toBe(1);
    } finally {
      q.claimById = claimById;
      await pool.stop(2000);
    }
  });

  it('wake-ups that find every loop busy are all answered afterwards, each conversation in order', async () => {
    const ran: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const { pool, intake, ids } = await started(async (item) => {
      const text = (item.payload as InboundMessage).text;
      ran.push(text);
      if (text === '最初') await held; // the only loop is busy while the next two arrive
      p.brain.script(says('了解ウル。'));
      return p.runner.handleUserRequest(item);
    });
    try {
      await intake.accept(consoleMessage('最初', { senderAccountId: 'kato-ryo', senderName: '加藤亮' }));
      await waitUntil(() => ran.length === 1);
      // Both arrive while the loop is busy: one from another sender, one from the same (behind the first).
      await intake.accept(consoleMessage('次', { senderAccountId: 'watanabe-sho', senderName: '渡辺翔' }));
      await intake.accept(consoleMessage('最後', { senderAccountId: 'kato-ryo', senderName: '加藤亮' }));
      release();
      await waitUntil(async () => (await t.db.workItem.count({ where: { id: { in: ids }, state: 'done' } })) === 3);
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
