import { Client } from 'pg';

/** Drops every database this test run created. */
export default async function globalTeardown(): Promise<void> {
  const serverUrl = process.env.HISHO_TEST_SERVER_URL;
  const runId = process.env.HISHO_TEST_RUN_ID;
  if (!serverUrl || !runId) return;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  const dbs = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [
    `${runId}%`,
  ]);
  for (const { datname } of dbs.rows) {
    await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => undefined);
  }
  await admin.end();
}
