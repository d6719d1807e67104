import { createDatabase } from '../../src/db/prisma';
import { WorkQueue } from '../../src/intake/work-queue';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

/**
 * Issue 10: hot statements are prepared once per connection (PostgreSQL may then keep a generic plan), except the
 * queue claim, whose best plan depends on how full the queue is: a generic plan made on an empty queue kept
 * scanning a full one (a 1,000-mention burst fell from 91 to 24 answered a second on a fresh database).
 */
describe('prepared statements on the pool', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(() => t.close());

  it('the intake insert is prepared on its connection; the claim is planned on every execution', async () => {
    // One connection, so what it has prepared can be read back through the same pool.
    const { db, pool } = createDatabase({ url: t.url, poolMax: 1 });
    try {
      const queue = new WorkQueue(db, { instanceId: 'prep', claimTtlMs: 60_000, defaultMaxAttempts: 3, pool });
      for (let i = 0; i < 7; i++) {
        await queue.enqueue({ type: 'user_request', payload: { i }, orderingKey: `c${i}`, dedupeKey: `prep-${i}` });
        expect(await queue.claim()).not.toBeNull();
      }
      const { rows } = await pool.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements');
      const prepared = rows.map((r) => r.statement);
      expect(prepared.some((s) => s.includes('INSERT INTO work_items'))).toBe(true);
      expect(prepared.some((s) => s.includes(`SET state = 'running'`))).toBe(false);
    } finally {
      await db.$disconnect();
      await pool.end().catch(() => undefined);
    }
  });
});
