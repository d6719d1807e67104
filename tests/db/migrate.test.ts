import { Client } from 'pg';
import { applyMigrations } from '../../src/db/migrate';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

describe('applyMigrations', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.close();
  });

  it('is idempotent and records migrations the way prisma migrate deploy does', async () => {
    const res = await applyMigrations(t.url);
    expect(res.applied).toEqual([]);
    expect(res.alreadyApplied).toBeGreaterThanOrEqual(1);
    const c = new Client({ connectionString: t.url });
    await c.connect();
    const rows = await c.query(`SELECT migration_name, checksum, finished_at FROM "_prisma_migrations"`);
    await c.end();
    expect(rows.rows[0].migration_name).toMatch(/_init$/);
    expect(rows.rows[0].checksum).toMatch(/^[0-9a-f]{64}$/);
  });

  it('gives a working Prisma client on the migrated schema', async () => {
    await t.db.organization.create({ data: { id: 'acme', name: 'Acme' } });
    expect(await t.db.organization.count()).toBe(1);
  });
});
