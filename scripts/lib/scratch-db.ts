// Throwaway PostgreSQL databases for the command-line tools (`npm run eval`, `npm run proof`): on the
// server in DATABASE_URL when set, otherwise on an embedded server in a temporary directory.
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres, tempDataDir } from '../../src/db/embedded-postgres';

/** A PostgreSQL server to create scratch databases on. */
export interface ScratchServer {
  /** Connection string to a maintenance database of the server. */
  url: string;
  embedded: boolean;
  /** Creates a database (optionally as a copy of `template`) and returns its URL. */
  create(name: string, template?: string): Promise<string>;
  /** Drops every database this object created, then stops an embedded server. */
  close(): Promise<void>;
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export async function scratchServer(opts: { databaseUrl?: string; prefix: string }): Promise<ScratchServer> {
  let url = opts.databaseUrl;
  let stop: (() => Promise<void>) | null = null;
  if (!url) {
    const dataDir = tempDataDir(`${opts.prefix}-pg-`);
    const emb = await startEmbeddedPostgres({ dataDir, persistent: false });
    url = emb.adminUrl;
    stop = async () => {
      await emb.stop();
      fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
    };
  }
  const created: string[] = [];
  const admin = async <T>(fn: (c: Client) => Promise<T>): Promise<T> => {
    const c = new Client({ connectionString: url });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  const server = url;
  return {
    url: server,
    embedded: stop !== null,
    async create(name, template) {
      await admin((c) => c.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`));
      created.push(name);
      return withDatabase(server, name);
    },
    async close() {
      if (created.length > 0) {
        await admin(async (c) => {
          for (const name of created.reverse())
            await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
        }).catch(() => undefined);
      }
      if (stop) await stop();
    },
  };
}
