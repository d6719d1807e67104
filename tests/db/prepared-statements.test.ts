import { createDatabase } from '../../src/db/prisma';
import { WorkQueue } from '../../src/queue/work-queue';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

/**
 * Issue 10: hot statements are prepared once per connection (PostgreSQL may then keep a generic plan). The queue
 * claim is prepared too: its plan is fixed by its database function (`claim_work_item`), so neither a plan made on
 * an empty queue nor missing statistics can make it scan every finished item.
 */
describe('prepared statements and the claim plan', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(() => t.close());

  it('the intake insert and the claim are prepared on their connection', async () => {
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
      expect(prepared.some((s) => s.includes('claim_work_item'))).toBe(true);
    } finally {
      await db.$disconnect();
      await pool.end().catch(() => undefined);
    }
  });

  it('a claim walks unfinished items in id order, on a table never analysed and full of finished ones', async () => {
    const { db, pool } = createDatabase({ url: t.url, poolMax: 1 });
    const plans: string[] = [];
    pool.on('connect', (client) => client.on('notice', (n) => plans.push(n.message ?? '')));
    try {
      await pool.query('TRUNCATE work_items');
      // A burst's shape: 250 conversations; the older 2,000 messages answered (each row updated, as turns do),
      // 1,000 still waiting. No ANALYZE: like a new database, or a server with autovacuum off.
      await pool.query(
        `INSERT INTO work_items (type, payload, "orderingKey", "dedupeKey", "runAt", "maxAttempts")
         SELECT 'user_request', '{}'::jsonb, 'chatwork:' || (g % 250), 'plan-' || g, now(), 3
           FROM generate_series(1, 3000) g`,
      );
      await pool.query(`UPDATE work_items SET state = 'running' WHERE "dedupeKey" IN (
        SELECT 'plan-' || g FROM generate_series(1, 2000) g)`);
      await pool.query(`UPDATE work_items SET state = 'done' WHERE state = 'running'`);
      const queue = new WorkQueue(db, { instanceId: 'plan', claimTtlMs: 60_000, defaultMaxAttempts: 3, pool });
      // The plan the claim's statement runs with, as PostgreSQL's auto_explain reports it to this connection.
      await pool.query(`LOAD 'auto_explain'`);
      await pool.query('SET auto_explain.log_min_duration = 0');
      await pool.query('SET auto_explain.log_nested_statements = on');
      await pool.query('SET client_min_messages = log');
      const claimed = await queue.claim();
      await pool.query('SET client_min_messages = notice');
      const plan = plans.filter((p) => p.includes('UPDATE work_items')).join('\n');
      expect(plan).toContain('Index Scan using work_items_open_id_idx');
      expect(plan).not.toContain('Bitmap');
      expect(plan).not.toMatch(/\bSort\b/);
      // The oldest waiting message, the first of its conversation.
      expect(claimed?.dedupeKey).toBe('plan-2001');
    } finally {
      await db.$disconnect();
      await pool.end().catch(() => undefined);
    }
  });
});
