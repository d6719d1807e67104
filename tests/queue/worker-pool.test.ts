import { silentLogger } from '../../src/observability/logger';
import { WorkerPool, type WorkerPoolOptions } from '../../src/queue/worker-pool';
import { WorkQueue, type ClaimedItem } from '../../src/queue/work-queue';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.close();
});

/** A pool over `queue` with a test's loops, poll, claim lifetime and handlers; failures are final, logs silent. */
function testPool(
  queue: WorkQueue,
  o: Pick<WorkerPoolOptions, 'concurrency' | 'pollMs' | 'claimTtlMs' | 'handlers'>,
): WorkerPool {
  return new WorkerPool({
    ...o,
    queue,
    logger: silentLogger(),
    describeError: () => ({ text: 'x', retryable: false }),
  });
}

describe('WorkerPool: a worker that lost its claim is told to stop', () => {
  it('a heartbeat that finds the item taken over marks it claimLost while the handler still runs', async () => {
    const queue = new WorkQueue(tdb.db, { instanceId: 'pool-test', claimTtlMs: 300, defaultMaxAttempts: 3 });
    let seen: ClaimedItem | null = null;
    let release!: () => void;
    const finished = new Promise<void>((r) => {
      release = r;
    });
    const pool = testPool(queue, {
      concurrency: 1,
      pollMs: 20,
      claimTtlMs: 300,
      handlers: {
        work: async (item) => {
          seen = item;
          // Another instance takes the item over (our claim expired during a long pause).
          await tdb.db.$executeRaw`UPDATE work_items SET "claimedBy" = 'someone-else' WHERE id = ${item.id}`;
          const until = Date.now() + 3000;
          while (!item.claimLost && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
          release();
        },
      },
    });
    await queue.enqueue({ type: 'work', payload: {}, orderingKey: 'k', dedupeKey: 'claim-lost-1' });
    pool.start();
    await finished;
    await pool.stop(1000);
    expect(seen).not.toBeNull();
    expect(seen!.claimLost).toBe(true);
    // The worker could not complete an item it no longer owns.
    const row = await tdb.db.workItem.findUniqueOrThrow({ where: { dedupeKey: 'claim-lost-1' } });
    expect(row.claimedBy).toBe('someone-else');
  });
});

describe('WorkerPool: an answer queued behind its request', () => {
  it('is claimed at once when the request finishes while another loop is looking (not at the next poll)', async () => {
    // The race behind the confirmation round trip's p99: loop 1 claims while the request still runs (its
    // conversation's order holds the answer back), the request finishes before loop 1 hears "nothing", and
    // no loop looks again until the poll (here 10 s).
    let holdClaims: Promise<void> | null = null;
    class HeldQueue extends WorkQueue {
      override async claim(types?: Parameters<WorkQueue['claim']>[0]): Promise<ClaimedItem | null> {
        const got = await super.claim(types);
        const hold = holdClaims;
        if (hold && got === null) await hold;
        return got;
      }
    }
    const queue = new HeldQueue(tdb.db, { instanceId: 'order-race', claimTtlMs: 30_000, defaultMaxAttempts: 3 });
    let finishRequest!: () => void;
    const requestGate = new Promise<void>((r) => {
      finishRequest = r;
    });
    let requestStarted!: () => void;
    const started = new Promise<void>((r) => {
      requestStarted = r;
    });
    const handled: string[] = [];
    let answerAt = 0;
    const pool = testPool(queue, {
      concurrency: 2,
      pollMs: 10_000,
      claimTtlMs: 30_000,
      handlers: {
        user_request: async (item) => {
          const which = (item.payload as { which: string }).which;
          handled.push(which);
          if (which === 'request') {
            requestStarted();
            await requestGate;
          } else answerAt = Date.now();
        },
      },
    });
    // Both loops start on an empty queue and go idle; then the request comes and wakes one of them.
    pool.start();
    await new Promise((r) => setTimeout(r, 200));
    await queue.enqueue({
      type: 'user_request',
      payload: { which: 'request' },
      orderingKey: 'c1',
      dedupeKey: 'race-r',
    });
    pool.wake();
    await started;
    // The answer arrives while the request runs; the idle loop's claim finds nothing and is held...
    let releaseClaims!: () => void;
    holdClaims = new Promise<void>((r) => {
      releaseClaims = r;
    });
    await queue.enqueue({ type: 'user_request', payload: { which: 'answer' }, orderingKey: 'c1', dedupeKey: 'race-a' });
    pool.wake();
    await new Promise((r) => setTimeout(r, 200));
    // ...until the request has finished and is done in the database.
    finishRequest();
    const until = Date.now() + 5000;
    while (Date.now() < until) {
      const r = await tdb.db.workItem.findUniqueOrThrow({ where: { dedupeKey: 'race-r' } });
      if (r.state === 'done') break;
      await new Promise((res) => setTimeout(res, 10));
    }
    holdClaims = null;
    const released = Date.now();
    releaseClaims();
    while (answerAt === 0 && Date.now() - released < 3000) await new Promise((r) => setTimeout(r, 10));
    await pool.stop(1000);
    expect(handled).toEqual(['request', 'answer']);
    expect(answerAt - released).toBeLessThan(1000);
  });
});

describe('WorkerPool: polling', () => {
  it('an idle pool claims about once per poll interval, however many loops it has', async () => {
    let claims = 0;
    class CountingQueue extends WorkQueue {
      override async claim(types?: Parameters<WorkQueue['claim']>[0]): Promise<ClaimedItem | null> {
        claims++;
        return super.claim(types);
      }
    }
    const queue = new CountingQueue(tdb.db, { instanceId: 'idle-poll', claimTtlMs: 30_000, defaultMaxAttempts: 3 });
    const pool = testPool(queue, {
      concurrency: 8,
      pollMs: 50,
      claimTtlMs: 30_000,
      handlers: { work: async () => undefined },
    });
    pool.start();
    // Every loop claims once at start; then only the pool's poll does.
    await new Promise((r) => setTimeout(r, 300));
    const before = claims;
    await new Promise((r) => setTimeout(r, 1000));
    const inOneSecond = claims - before;
    await pool.stop(1000);
    // ≈ 20 (one per 50 ms); eight loops polling each on their own made ≈ 160.
    expect(inOneSecond).toBeGreaterThanOrEqual(8);
    expect(inOneSecond).toBeLessThanOrEqual(40);
  });

  it('a backlog nobody woke it for (another instance’s, retries) is found by the poll and drained', async () => {
    const queue = new WorkQueue(tdb.db, { instanceId: 'backlog', claimTtlMs: 30_000, defaultMaxAttempts: 3 });
    const done: string[] = [];
    let running = 0;
    let most = 0;
    const pool = testPool(queue, {
      concurrency: 4,
      pollMs: 300,
      claimTtlMs: 30_000,
      handlers: {
        work: async (item) => {
          most = Math.max(most, ++running);
          await new Promise((r) => setTimeout(r, 100));
          running--;
          done.push(item.dedupeKey);
        },
      },
    });
    pool.start();
    await new Promise((r) => setTimeout(r, 100));
    // Stored without a wake-up, as another instance's intake or a retry's backoff leaves them.
    for (let i = 0; i < 12; i++)
      await queue.enqueue({ type: 'work', payload: {}, orderingKey: `backlog-${i}`, dedupeKey: `backlog-${i}` });
    const until = Date.now() + 5000;
    while (done.length < 12 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    await pool.stop(1000);
    expect(done).toHaveLength(12);
    // Found by one poll, then the loops that found work woke the others.
    expect(most).toBeGreaterThanOrEqual(3);
  });
});

describe('WorkerPool: the intake of the same process first', () => {
  it('starts no new item while the intake is busy, and claims it once the intake is idle', async () => {
    const queue = new WorkQueue(tdb.db, { instanceId: 'hold-test', claimTtlMs: 30_000, defaultMaxAttempts: 3 });
    let busy = true;
    let idle!: () => void;
    const idleNow = new Promise<void>((r) => {
      idle = r;
    });
    let ranWhileBusy: boolean | null = null;
    let handled!: () => void;
    const done = new Promise<void>((r) => {
      handled = r;
    });
    const pool = new WorkerPool({
      queue,
      concurrency: 2,
      pollMs: 20,
      claimTtlMs: 30_000,
      logger: silentLogger(),
      describeError: () => ({ text: 'x', retryable: false }),
      handlers: {
        work: async () => {
          ranWhileBusy = busy;
          handled();
        },
      },
      // Longer than the test: only the intake going idle releases the hold.
      hold: { busy: () => busy, whenIdle: () => idleNow, maxMs: 60_000 },
    });
    await queue.enqueue({ type: 'work', payload: {}, orderingKey: 'h', dedupeKey: 'hold-1' });
    pool.start();
    pool.wake();
    // Several polls pass while the intake is busy: the item stays queued.
    await new Promise((r) => setTimeout(r, 200));
    const waiting = await tdb.db.workItem.findUniqueOrThrow({ where: { dedupeKey: 'hold-1' } });
    expect(waiting.state).toBe('queued');
    busy = false;
    idle();
    await done;
    await pool.stop(1000);
    expect(ranWhileBusy).toBe(false);
  });
});
