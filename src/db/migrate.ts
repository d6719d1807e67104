import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';

/** Where the checked-in migrations live (standard Prisma layout). */
export const MIGRATIONS_DIR = path.resolve(__dirname, '..', '..', 'prisma', 'migrations');

export interface MigrationResult {
  applied: string[];
  alreadyApplied: number;
}

/** The checked-in migrations' names, in the order they apply. */
export function migrationNames(dir = MIGRATIONS_DIR): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(dir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort();
}

/**
 * Applies `prisma/migrations/<name>/migration.sql` in order and records them in `_prisma_migrations`
 * exactly as `prisma migrate deploy` does (same table, same sha256 checksum), so either tool can
 * take over. Runs under an advisory lock: several instances starting together apply each migration once.
 */
export async function applyMigrations(
  databaseUrl: string,
  dir = MIGRATIONS_DIR,
  /** Apply only the migrations up to this one (a restore builds the schema its backup was taken with). */
  upTo?: string,
): Promise<MigrationResult> {
  const names = migrationNames(dir).filter((n) => upTo === undefined || n <= upTo);
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock(72707369)');
    await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`);
    const done = await client.query<{ migration_name: string; checksum: string }>(
      `SELECT migration_name, checksum FROM "_prisma_migrations"
       WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const doneByName = new Map(done.rows.map((r) => [r.migration_name, r.checksum]));
    const applied: string[] = [];
    for (const name of names) {
      const sql = fs.readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      const prior = doneByName.get(name);
      if (prior) {
        if (prior !== checksum) {
          throw new Error(
            `Migration ${name} was changed after it was applied (checksum mismatch). Create a new migration instead.`,
          );
        }
        continue;
      }
      const id = randomUUID();
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count)
           VALUES ($1, $2, now(), $3, 1)`,
          [id, checksum, name],
        );
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`Migration ${name} failed: ${(err as Error).message}`);
      }
      applied.push(name);
    }
    return { applied, alreadyApplied: names.length - applied.length };
  } finally {
    await client.query('SELECT pg_advisory_unlock(72707369)').catch(() => undefined);
    await client.end();
  }
}
