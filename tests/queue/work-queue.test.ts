import { SqlParams, sqlRunner } from '../../src/db/sql';
import { installStatementCounter } from '../../src/db/statement-counter';
import { completeCte, WorkQueue, type EnqueueInput, type GaveUp } from '../../src/queue/work-queue';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

/** The durable work queue on real PostgreSQL: dedupe, per-conversation order, claims, retries. */
describe('WorkQueue', () => {
  let t: TestDatabase;
  let n = 0;
  const queue = (over: { instanceId?: string; claimTtlMs?: number } = {}) =>
    new WorkQueue(t.db, {
      instanceId: 'a',
      claimTtlMs: 60_000,
      defaultMaxAttempts: 3,
      retryDelayMs: () => 60_000,
      ...over,
    });
  const item = (over: Partial<EnqueueInput> = {}): EnqueueInput => {
    n += 1;
    return { type: 'user_request', payload: { n }, orderingKey: `conv-${n}`, dedupeKey: `msg-${n}`, ...over };
  };
  const state = async (id: bigint) => (await t.db.workItem.findUniqueOrThrow({ where: { id } })).state;

  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(() => t.close());
  beforeEach(() => t.db.workItem.deleteMany());

  it('stores a message once: a redelivery with the same key is a duplicate', async () => {
    const q = queue();
    const first = item();
    expect(await q.enqueue(first)).toMatchObject({ duplicate: false });
    expect(await q.enqueue({ ...first, payload: { again: true } })).toEqual({ id: null, duplicate: true });
    expect(await t.db.workItem.count()).toBe(1);
  });

  it('one conversation runs in order (a 「はい」 never overtakes its request); other conversations go ahead', async () => {
    const q = queue();
    const request = await q.enqueue(item({ orderingKey: 'room:1:tanaka' }));
    const answer = await q.enqueue(item({ orderingKey: 'room:1:tanaka' }));
    const other = await q.enqueue(item({ orderingKey: 'room:1:sato' }));

    const a = await q.claim();
    const b = await q.claim();
    expect([a?.id, b?.id]).toEqual([request.id, other.id]);
    expect(await q.claim()).toBeNull();

    expect(await q.complete(a!)).toBe(true);
    expect((await q.claim())?.id).toBe(answer.id);
  });

  it('grouped intake: a burst goes in with few statements, in arrival order, duplicates told apart', async () => {
    const q = queue();
    const existing = item();
    await q.enqueue(existing);
    // Webhooks arriving together, as a burst brings them (one is a redelivery, one was stored earlier).
    const counter = installStatementCounter();
    counter.reset();
    const inputs = Array.from({ length: 60 }, () => item({ orderingKey: 'burst' }));
    inputs.splice(30, 0, { ...inputs[10]! }, existing);
    const results = await Promise.all(inputs.map((i) => q.enqueueGrouped(i)));
    const inserts = counter.byShape()['INSERT work_items'] ?? 0;
    expect(inserts).toBeGreaterThan(0);
    expect(inserts).toBeLessThanOrEqual(3);
    expect(results.filter((r) => r.duplicate)).toHaveLength(2);
    expect(results[30]).toEqual({ id: null, duplicate: true });
    expect(results[31]).toEqual({ id: null, duplicate: true });
    const ids = results.filter((r) => !r.duplicate).map((r) => r.id!);
    expect(ids).toHaveLength(60);
    expect([...ids].sort((a, b) => (a < b ? -1 : 1))).toEqual(ids);
    // Claimed in that order too: the older item first, then the burst's first (its conversation waits behind it).
    expect((await q.claim())?.dedupeKey).toBe(existing.dedupeKey);
    expect((await q.claim())?.id).toBe(ids[0]);
    expect(await q.claim()).toBeNull();
  });

  it('grouped intake: payloads stored exactly (quotes, backslashes, emoji, nesting), run time kept', async () => {
    const q = queue();
    const runAt = new Date(Date.now() + 3_600_000);
    const payloads = [
      { text: '「はい」 "quoted" \\ back\\slash \n newline 👍', mentions: ['1', '2'], nested: { a: [1, null, true] } },
      { text: '[To:1]Hishoさん\n田中さんに頼んで', empty: '', zero: 0 },
      { text: 'plain' },
    ];
    const inputs = payloads.map((payload, i) => item({ payload, ...(i === 2 ? { runAt, maxAttempts: 7 } : {}) }));
    const results = await Promise.all(inputs.map((i) => q.enqueueGrouped(i)));
    const rows = await t.db.workItem.findMany({
      where: { id: { in: results.map((r) => r.id!) } },
      orderBy: { id: 'asc' },
    });
    expect(rows.map((r) => r.payload)).toEqual(payloads);
    expect(rows[2]!.runAt.getTime()).toBe(runAt.getTime());
    expect(rows[2]!.maxAttempts).toBe(7);
    expect(rows[0]!.maxAttempts).toBe(3);
    // Stored now by the database's clock: claimable at once.
    expect(rows[0]!.runAt.getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
    expect((await q.claim())?.id).toBe(results[0]!.id);
  });

  it('grouped intake: one item the database refuses fails alone; the rest of its group is stored', async () => {
    const q = queue();
    const good = Array.from({ length: 5 }, () => item());
    // A NUL escape: jsonb refuses it (the adapters clean it; here it stands for any row the database refuses).
    const bad = item({ payload: { text: 'a\u0000b' } });
    const settled = await Promise.allSettled([...good, bad].map((i) => q.enqueueGrouped(i)));
    expect(settled.slice(0, 5).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(settled[5]!.status).toBe('rejected');
    expect(await t.db.workItem.count()).toBe(5);
  });

  it('people come first: a message or a notice is claimed before older background work', async () => {
    const q = queue();
    const critique = await q.enqueue(item({ type: 'work' }));
    const summary = await q.enqueue(item({ type: 'work' }));
    const message = await q.enqueue(item({ type: 'user_request' }));
    const notice = await q.enqueue(item({ type: 'notification' }));
    const order = [];
    for (let i = 0; i < 4; i++) order.push((await q.claim())?.id);
    expect(order).toEqual([message.id, notice.id, critique.id, summary.id]);
    expect(await q.claim()).toBeNull();
    // A worker that takes only background work still gets it.
    const more = await q.enqueue(item({ type: 'work' }));
    await q.enqueue(item({ type: 'user_request' }));
    expect((await q.claim(['work']))?.id).toBe(more.id);
  });

  it('only the holder of a claim completes it — also inside a composed statement', async () => {
    const q = queue();
    await q.enqueue(item());
    const mine = (await q.claim())!;
    expect(await q.complete({ ...mine, claimToken: 'someone-else' })).toBe(false);

    const p = new SqlParams();
    const rows = await sqlRunner(t.db)<{ n: number }>(
      `WITH ${completeCte(p, 'w', mine)} SELECT count(*)::int AS n FROM w`,
      p.values,
    );
    expect(rows[0]!.n).toBe(1);
    expect(await state(mine.id)).toBe('done');
    expect(await q.complete(mine)).toBe(false);
  });

  it('a failed attempt is retried later; a non-retryable or last one fails the item', async () => {
    const q = queue();
    await q.enqueue(item({ maxAttempts: 2 }));
    const first = (await q.claim())!;
    expect(await q.fail(first, 'E1', { retryable: true })).toBe('queued');
    expect(await q.claim()).toBeNull(); // backing off

    await t.db.workItem.update({ where: { id: first.id }, data: { runAt: new Date(Date.now() - 1) } });
    const second = (await q.claim())!;
    expect(second.attempts).toBe(2);
    expect(await q.fail(second, 'E2', { retryable: true })).toBe('failed');

    await q.enqueue(item());
    const other = (await q.claim())!;
    expect(await q.fail(other, 'bad input', { retryable: false })).toBe('failed');
  });

  it('an item that gives up keeps its error id, tells the service, enqueues the apology of a request', async () => {
    const gaveUp: GaveUp[] = [];
    const q = new WorkQueue(t.db, {
      instanceId: 'a',
      claimTtlMs: 60_000,
      defaultMaxAttempts: 1,
      onGaveUp: (g) => gaveUp.push(g),
    });
    await q.enqueue(item({ payload: { roomId: '7' } }));
    const turn = (await q.claim())!;
    expect(await q.fail(turn, '[E-ABC1234] EXTERNAL_API_FAILED: POST failed', { retryable: true })).toBe('failed');
    expect(await t.db.workItem.findUniqueOrThrow({ where: { id: turn.id } })).toMatchObject({
      state: 'failed',
      errorId: 'E-ABC1234',
    });
    const apology = await t.db.workItem.findUniqueOrThrow({ where: { dedupeKey: `apology:${turn.dedupeKey}` } });
    expect(apology).toMatchObject({ type: 'notification', state: 'queued', orderingKey: turn.orderingKey });
    expect(apology.payload).toMatchObject({ kind: 'apology', errorId: 'E-ABC1234', code: 'EXTERNAL_API_FAILED' });
    expect(gaveUp).toEqual([
      { id: turn.id, type: 'user_request', kind: null, dedupeKey: turn.dedupeKey, errorId: 'E-ABC1234', apology: true },
    ]);

    // The apology gives up in turn (an error without an id gets one): no apology for the apology.
    const sorry = (await q.claim())!;
    expect(sorry.dedupeKey).toBe(`apology:${turn.dedupeKey}`);
    expect(await q.fail(sorry, 'no id here', { retryable: false })).toBe('failed');
    expect(gaveUp[1]).toMatchObject({ type: 'notification', apology: false, errorId: expect.stringMatching(/^E-/) });
    expect(await t.db.workItem.count()).toBe(2);

    // Abandoned by crashing workers: the same.
    await q.enqueue(item());
    const crashed = (await q.claim())!;
    await t.db.workItem.update({
      where: { id: crashed.id },
      data: { attempts: 2, claimExpiresAt: new Date(Date.now() - 1000) },
    });
    expect(await q.failAbandoned()).toBe(1);
    expect(gaveUp[2]).toMatchObject({
      id: crashed.id,
      apology: true,
      errorId: expect.stringMatching(/^E-[A-Z0-9]{7}$/),
    });
    expect(await t.db.workItem.count({ where: { dedupeKey: `apology:${crashed.dedupeKey}` } })).toBe(1);
  });

  it("a crashed worker's claim expires, another worker takes the item, the first cannot finish it", async () => {
    const crashed = queue({ instanceId: 'crashed', claimTtlMs: 30 });
    const healthy = queue({ instanceId: 'healthy' });
    await crashed.enqueue(item());
    const lost = (await crashed.claim())!;
    await new Promise((r) => setTimeout(r, 60));

    const taken = (await healthy.claim())!;
    expect(taken.id).toBe(lost.id);
    expect(taken.attempts).toBe(2);
    expect(await crashed.heartbeat(lost)).toBe(false);
    expect(await crashed.complete(lost)).toBe(false);
    expect(await healthy.complete(taken)).toBe(true);
  });

  it('release (graceful shutdown) gives the item back without counting the attempt', async () => {
    const q = queue();
    await q.enqueue(item());
    const claimed = (await q.claim())!;
    await q.release(claimed);
    expect(await state(claimed.id)).toBe('queued');
    expect((await q.claim())!.attempts).toBe(1);
  });
});
