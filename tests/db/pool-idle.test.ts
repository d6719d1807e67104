import { createDatabase } from '../../src/db/prisma';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

/**
 * The service's pool keeps its connections through a quiet spell (issue 10): pg closes idle ones after 10 s by
 * default, and a reopened connection makes the next message's turn start a backend, prepare its statements and
 * compile the claim function again.
 */
describe('the service pool through a quiet spell', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(() => t.close());

  it('the connection used before 11 s of quiet serves the next one; one the server ends is replaced', async () => {
    const { db, pool } = createDatabase({ url: t.url, poolMax: 2 });
    const backend = async () => (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    try {
      const before = await backend();
      await new Promise((r) => setTimeout(r, 11_000));
      expect(pool.totalCount).toBe(1);
      expect(await backend()).toBe(before);

      // The server ends the idle connection (a restart, an idle-session limit): the pool drops it and opens another.
      await t.db.$queryRawUnsafe(`SELECT pg_terminate_backend(${before})`);
      await new Promise((r) => setTimeout(r, 200));
      const after = await backend();
      expect(after).not.toBe(before);
    } finally {
      await db.$disconnect();
      await pool.end().catch(() => undefined);
    }
  }, 20_000);
});
