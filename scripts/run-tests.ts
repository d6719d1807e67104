// `npm test`: runs jest against real PostgreSQL — the server in DATABASE_URL when set, otherwise a
// throwaway embedded PostgreSQL in a temporary directory (a fresh machine has no database server).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startEmbeddedPostgres, tempDataDir } from '../src/db/embedded-postgres';

async function main(): Promise<number> {
  const env = { ...process.env };
  let stop: (() => Promise<void>) | undefined;
  if (!env.DATABASE_URL) {
    const dataDir = tempDataDir('hisho-test-pg-');
    const started = Date.now();
    const db = await startEmbeddedPostgres({ dataDir, persistent: false });
    console.log(`[test] DATABASE_URL unset: embedded PostgreSQL started in ${Date.now() - started} ms`);
    env.DATABASE_URL = db.url;
    stop = async () => {
      await db.stop();
      fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
    };
  }
  const jest = require.resolve('jest/bin/jest');
  const code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, [jest, ...process.argv.slice(2)], { env, stdio: 'inherit' });
    child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
  });
  if (stop) await stop().catch((err: Error) => console.error(`[test] embedded PostgreSQL stop failed: ${err.message}`));
  return code;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(err);
    process.exit(1);
  },
);
