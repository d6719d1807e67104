import type { InboundMessage } from '../../src/core/chat';
import { Intake } from '../../src/intake/intake';
import { replyKeyOf, type ClaimedItem, type WorkQueue } from '../../src/intake/work-queue';
import { WorkerPool, type ClaimNamed, type WakeHint, type WorkHandler } from '../../src/intake/worker-pool';
import { silentLogger } from '../../src/observability/logger';
import type { Sql } from '../../src/db/sql';
import { says } from '../fakes/fake-brain';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { consoleMessage, createTestPipeline, type TestPipeline } from '../helpers/pipeline';

/**
 * A message a wake-up names is claimed by its turn's first statement (issue 10: one round trip instead of the claim
 * and then that statement). The statement writes the reply key and the user message only when its claim took the
 * item: a message another worker holds, or one that waits behind an older message of its conversation, leaves no
 * trace, and the worker claims as usual.
 */
describe('a named message claimed by its turn’s first statement', () => {
  let t: TestDatabase;
  let p: TestPipeline;
  let hints: WakeHint[] = [];
  let intake: Intake;
  /** Statements through the pipeline's raw SQL runner (the turn's), by their first words. */
  let statements: string[] = [];
  const watch =
    (sql: Sql): Sql =>
    <T>(text: string, params?: unknown[]) => {
      statements.push(text.trim().slice(0, 40));
      return sql<T>(text, params);
    };
  const claimNamed = (hint: WakeHint) =>
    p.runner.claimNamed(hint.message as InboundMessage, (q, name) =>
      p.queue.claimByIdCte(q, name, hint.itemId!, ['user_request']),
    );
  const accept = async (msg: InboundMessage): Promise<WakeHint> => {
    expect(await intake.accept(msg)).toEqual({ status: 'accepted' });
    return hints.at(-1)!;
  };
  const itemRow = (id: bigint) => t.db.workItem.findUniqueOrThrow({ where: { id } });
  const storedMessage = (m: InboundMessage) =>
    t.db.conversationMessage.findFirst({ where: { platformMessageId: m.platformMessageId, role: 'user' } });
  const reservation = (m: InboundMessage) =>
    t.db.outboundMessage.findUnique({
      where: { dedupeKey: replyKeyOf({ dedupeKey: `msg:${m.platform}:${m.roomId}:${m.platformMessageId}` }) },
    });

  beforeAll(async () => {
    t = await createTestDatabase();
    p = await createTestPipeline(t, {}, { wrapSql: watch });
    intake = new Intake(p.queue, (h) => hints.push(h));
  });
  afterAll(() => t.close());
  beforeEach(() => {
    hints = [];
    statements = [];
  });

  it('the wake-up carries the stored message; the claim, the reply key and the message are one statement', async () => {
    const msg = consoleMessage('こんにちは', { roomId: 'console-general', senderAccountId: 'tanaka-taro' });
    const hint = await accept(msg);
    expect(hint.message).toEqual(msg);

    const item = await claimNamed(hint);
    expect(item).not.toBeNull();
    expect(statements).toHaveLength(1);
    expect(await itemRow(hint.itemId!)).toMatchObject({ state: 'running', attempts: 1, claimedBy: item!.claimToken });
    expect(await reservation(msg)).toMatchObject({ status: 'sending' });
    expect(await storedMessage(msg)).not.toBeNull();

    p.brain.script(says('こんにちはウル！'));
    statements = [];
    expect(await p.runner.handleUserRequest(item!)).toEqual({ completed: true });
    expect(p.sender.sent.at(-1)!.text).toBe('こんにちはウル！');
    // The turn did not open again: no second reservation statement, and one user message in the history.
    expect(statements.filter((s) => s.startsWith('WITH c AS') || s.startsWith('WITH r AS'))).toEqual([]);
    expect(await t.db.conversationMessage.count({ where: { platformMessageId: msg.platformMessageId } })).toBe(1);
    expect(await itemRow(hint.itemId!)).toMatchObject({ state: 'done' });
    expect(await t.db.turnRecord.count({ where: { workItemId: hint.itemId! } })).toBe(1);
  });

  it('a message another worker holds: nothing is written, and no item is returned', async () => {
    const msg = consoleMessage('資料はどこ？', { senderAccountId: 'suzuki-kenji', senderName: '鈴木健二' });
    const hint = await accept(msg);
    const other = await p.queue.claimById(hint.itemId!, ['user_request']);
    expect(other).not.toBeNull();

    expect(await claimNamed(hint)).toBeNull();
    expect(await itemRow(hint.itemId!)).toMatchObject({ state: 'running', attempts: 1, claimedBy: other!.claimToken });
    expect(await reservation(msg)).toBeNull();
    expect(await storedMessage(msg)).toBeNull();
  });

  it('a 「はい」 behind its request is not taken and leaves no trace, so the request’s turn does not see it', async () => {
    const request = consoleMessage('田中さんに見積書をお願いしたいかも', { senderAccountId: 'sato-misaki' });
    const answer = consoleMessage('はい', { senderAccountId: 'sato-misaki' });
    const first = await accept(request);
    const second = await accept(answer);

    expect(await claimNamed(second)).toBeNull();
    expect(await itemRow(second.itemId!)).toMatchObject({ state: 'queued', attempts: 0 });
    expect(await reservation(answer)).toBeNull();
    expect(await storedMessage(answer)).toBeNull();

    // The request runs first; its context's history has no 「はい」 from the future.
    const item = await claimNamed(first);
    p.brain.script(says('承知したウル。'));
    await p.runner.handleUserRequest(item!);
    expect(p.brain.asked.at(-1)!.ctx.history.map((h) => h.text)).not.toContain('はい');
    // Now the 「はい」 is first in its conversation, and its own first statement takes it.
    const yes = await claimNamed(second);
    expect(yes).not.toBeNull();
    p.brain.script(says('了解ウル。'));
    expect(await p.runner.handleUserRequest(yes!)).toEqual({ completed: true });
  });

  it('a pool woken with the message claims it this way, and claims as usual when that takes nothing', async () => {
    const ran: ClaimedItem[] = [];
    const named: bigint[] = [];
    const pool = onePool(
      p.queue,
      async (item) => {
        ran.push(item);
        p.brain.script(says('了解ウル。'));
        return p.runner.handleUserRequest(item);
      },
      async (id, message, types) => {
        named.push(id);
        // The first named claim finds nothing (as if another worker had it); the pool must still find the item.
        if (named.length === 1) return null;
        return p.runner.claimNamed(message as InboundMessage, (q, name) => p.queue.claimByIdCte(q, name, id, types));
      },
    );
    const pooled = new Intake(p.queue, (h) => pool.wake(h));
    pool.start();
    // The loop's first look at the (empty) queue is over before anything is woken.
    await new Promise((r) => setTimeout(r, 200));
    try {
      const a = consoleMessage('一つ目', { senderAccountId: 'ito-yui', senderName: '伊藤結衣' });
      await pooled.accept(a);
      await waitUntil(async () => ran.length === 1 && (await itemRow(ran[0]!.id)).state === 'done');
      await new Promise((r) => setTimeout(r, 100)); // the loop waits for the next wake-up again
      const b = consoleMessage('二つ目', { senderAccountId: 'ito-yui', senderName: '伊藤結衣' });
      await pooled.accept(b);
      await waitUntil(() => ran.length === 2);
      expect(named).toHaveLength(2);
      expect(ran.map((i) => (i.payload as InboundMessage).text)).toEqual(['一つ目', '二つ目']);
      const done = () => t.db.workItem.count({ where: { id: { in: named }, state: 'done' } });
      await waitUntil(async () => (await done()) === 2);
    } finally {
      await pool.stop(2000);
    }
  });
});

describe('wake-ups that find every loop busy', () => {
  let t: TestDatabase;
  let p: TestPipeline;

  beforeAll(async () => {
    t = await createTestDatabase();
    p = await createTestPipeline(t);
  });
  afterAll(() => t.close());

  it('are claimed by name afterwards, oldest first, none by the ordered claim', async () => {
    const named: bigint[] = [];
    const ran: string[] = [];
    let ordered = 0;
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const queue = p.queue;
    const claim = queue.claim.bind(queue);
    queue.claim = async (types) => {
      const got = await claim(types);
      if (got) ordered++;
      return got;
    };
    const pool = onePool(
      queue,
      async (item) => {
        const text = (item.payload as InboundMessage).text;
        ran.push(text);
        if (text === '一つ目') await held; // the only loop is busy while the next two arrive
        p.brain.script(says('了解ウル。'));
        return p.runner.handleUserRequest(item);
      },
      (id, message, types) => {
        named.push(id);
        return p.runner.claimNamed(message as InboundMessage, (q, name) => queue.claimByIdCte(q, name, id, types));
      },
    );
    const intake = new Intake(queue, (h) => pool.wake(h));
    pool.start();
    await new Promise((r) => setTimeout(r, 200));
    try {
      await intake.accept(consoleMessage('一つ目', { senderAccountId: 'ito-yui', senderName: '伊藤結衣' }));
      await waitUntil(() => ran.length === 1);
      // Both arrive while the loop is busy: one from another sender, one from the same (behind the first).
      await intake.accept(consoleMessage('二つ目', { senderAccountId: 'watanabe-sho', senderName: '渡辺翔' }));
      await intake.accept(consoleMessage('三つ目', { senderAccountId: 'ito-yui', senderName: '伊藤結衣' }));
      release();
      await waitUntil(async () => (await t.db.workItem.count({ where: { state: 'done' } })) === 3);
      expect(ran).toEqual(['一つ目', '二つ目', '三つ目']);
      expect(named).toHaveLength(3);
      expect(ordered).toBe(0);
    } finally {
      queue.claim = claim;
      await pool.stop(2000);
    }
  });
});

/** One loop over `queue` running user requests with `handler`, claiming named messages with `claimNamed`. */
function onePool(queue: WorkQueue, handler: WorkHandler, claimNamed: ClaimNamed): WorkerPool {
  return new WorkerPool({
    queue,
    concurrency: 1,
    pollMs: 60_000,
    claimTtlMs: 60_000,
    logger: silentLogger(),
    describeError: () => ({ text: 'x', retryable: false }),
    handlers: { user_request: handler },
    claimNamed,
  });
}

async function waitUntil(ok: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
