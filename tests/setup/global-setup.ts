import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { applyMigrations } from '../../src/db/migrate';
import { withDatabase } from '../helpers/db-url';

/** Creates one migrated template database per test run; each test file clones it (tests/helpers/db.ts). */
export default async function globalSetup(): Promise<void> {
  // The process tests run `npm start` (the compiled service): compile once here, not in each of them.
  (require('../../scripts/dist') as { ensureBuilt(): void }).ensureBuilt();
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl)
    throw new Error('DATABASE_URL must be set (use `npm test`, which starts an embedded PostgreSQL when it is unset).');
  const runId = `hisho_t_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const template = `${runId}_tpl`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${template}"`);
  await admin.end();
  await applyMigrations(withDatabase(serverUrl, template));
  process.env.HISHO_TEST_RUN_ID = runId;
  process.env.HISHO_TEST_TEMPLATE_DB = template;
  process.env.HISHO_TEST_SERVER_URL = serverUrl;
}
