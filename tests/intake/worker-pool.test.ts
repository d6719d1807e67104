import { silentLogger } from '../../src/observability/logger';
import { WorkerPool } from '../../src/intake/worker-pool';
import { WorkQueue, type ClaimedItem } from '../../src/intake/work-queue';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.close();
});

describe('WorkerPool: a worker that lost its claim is told to stop', () => {
  it('a heartbeat that finds the item taken over marks it claimLost while the handler still runs', async () => {
    const queue = new WorkQueue(tdb.db, { instanceId: 'pool-test', claimTtlMs: 300, defaultMaxAttempts: 3 });
    let seen: ClaimedItem | null = null;
    let release!: () => void;
    const finished = new Promise<void>((r) => {
      release = r;
    });
    const pool = new WorkerPool({
      queue,
      concurrency: 1,
      logger: silentLogger(),
      pollMs: 20,
      claimTtlMs: 300,
      describeError: () => ({ text: 'x', retryable: false }),
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
