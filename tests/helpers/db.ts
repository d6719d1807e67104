import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createDb, type Db } from '../../src/db/prisma';
import { withDatabase } from './db-url';

export interface TestDatabase {
  url: string;
  db: Db;
  close(): Promise<void>;
}

/** A fresh, migrated database for one test file (cloned from the run's template). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const server = process.env.HISHO_TEST_SERVER_URL!;
  const template = process.env.HISHO_TEST_TEMPLATE_DB!;
  const name = `${process.env.HISHO_TEST_RUN_ID}_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: server });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(server, name);
  const db = createDb({ url, poolMax: 10 });
  return { url, db, close: () => db.$disconnect() };
}
