import { PrismaPg } from '@prisma/adapter-pg';
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
