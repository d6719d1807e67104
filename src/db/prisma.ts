import './wasm-baseline';
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
    // Connections stay open while idle (pg's default closes them after 10 s). A chat's messages usually come more
    // than 10 s apart, and a reopened connection costs its turn the connection's start-up, the preparing of each hot
    // statement again and the claim function's compile (a conversational turn after 11 s of quiet: 21–28 ms instead
    // of about 6, measured in the README). The pool still grows only as far as the load needs, up to `poolMax`. TCP
    // keep-alive probes from 60 s of silence keep a NAT or load balancer from dropping them unseen, and find a dead
    // server; an idle connection that errors is replaced (the pool's error handler below).
    idleTimeoutMillis: 0,
    keepAlive: true,
    keepAliveInitialDelayMillis: 60_000,
    // No JIT: short OLTP statements never repay its compile time, and a misestimate would make one cost
    // milliseconds.
    options: '-c jit=off',
  });
  // An idle client that errors (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  const db = new PrismaClient({ adapter: new PrismaPg(pool) });
  return { db, pool };
}

/**
 * Runs `fn` holding the database advisory lock `name` (a transaction-scoped lock, hashed by the database): every
 * instance on this database waits for the one holding it. `fn` should be short (it holds a connection).
 */
export async function withSharedLock<T>(db: Db, name: string, fn: () => Promise<T>): Promise<T> {
  return db.$transaction(
    async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${name}::text))`;
      return fn();
    },
    { timeout: 60_000, maxWait: 60_000 },
  );
}
