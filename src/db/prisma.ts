import { PrismaPg } from '@prisma/adapter-pg';
import { Pool } from 'pg';
import { PrismaClient } from '../generated/prisma/client';

export type Db = PrismaClient;
export { Prisma } from '../generated/prisma/client';

export interface CreateDbOptions {
  url: string;
  /** Pool size; bounded so an exhausted pool waits a bounded time instead of piling up (R-E2). */
  poolMax?: number;
  connectionTimeoutMs?: number;
}

/** The single Prisma client of a process (constructed at the composition root). */
export function createDb({ url, poolMax = 10, connectionTimeoutMs = 3000 }: CreateDbOptions): Db {
  const adapter = new PrismaPg({ connectionString: url, max: poolMax, connectionTimeoutMillis: connectionTimeoutMs });
  return new PrismaClient({ adapter });
}

/**
 * The Prisma client and the `pg` pool under it. The pool is shared: the few hot-path statements of a
 * turn (claim, the turn's combined reads and writes) run on it directly, skipping the ORM's per-query cost.
 */
export function createDatabase({ url, poolMax = 10, connectionTimeoutMs = 3000 }: CreateDbOptions): {
  db: Db;
  pool: Pool;
} {
  const pool = new Pool({
    connectionString: url,
    max: poolMax,
    connectionTimeoutMillis: connectionTimeoutMs,
    // No JIT: short OLTP statements never repay its compile time, and a misestimate would make one cost
    // milliseconds.
    options: '-c jit=off',
  });
  // An idle client that errors (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  const db = new PrismaClient({ adapter: new PrismaPg(pool) });
  return { db, pool };
}
