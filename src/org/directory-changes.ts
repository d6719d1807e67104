import { Client } from 'pg';
import type { Logger } from '../observability/logger';

/**
 * The Postgres channel a directory or knowledge import notifies (payload: the organisation id), on commit: what
 * is cached per organisation is read again.
 */
export const DIRECTORY_CHANNEL = 'hisho_directory';

export interface DirectoryChangesOptions {
  connectionString: string;
  logger: Logger;
  /** An organisation's directory changed; `null` = unknown which (the connection was lost: forget all). */
  onChange: (orgId: string | null) => void;
  /** Wait before listening again after the connection dropped (default 1 s). */
  retryMs?: number;
}

/**
 * Listens for directory imports on a dedicated connection (LISTEN needs one that stays open; the pool's
 * connections come and go). Every instance listens, so an import in one process (or `npm run org:import`)
 * reaches the caches of all of them without a restart. While the connection is down nothing can be heard,
 * so every drop tells the caches to forget everything, and listening resumes on its own.
 */
export class DirectoryChanges {
  private client: Client | null = null;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(private readonly opts: DirectoryChangesOptions) {}

  /** Starts listening; resolves once LISTEN is in place (or after the first failure, retrying behind). */
  async start(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({ connectionString: this.opts.connectionString, connectionTimeoutMillis: 3000 });
    this.client = client;
    const lost = () => {
      if (this.client !== client) return;
      this.client = null;
      client.removeAllListeners('notification');
      void client.end().catch(() => undefined);
      this.opts.onChange(null);
      if (this.stopped) return;
      this.retry = setTimeout(() => void this.start(), this.opts.retryMs ?? 1000);
      this.retry.unref();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (n) => {
      if (n.channel === DIRECTORY_CHANNEL) this.opts.onChange(n.payload || null);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${DIRECTORY_CHANNEL}`);
      // Anything imported before LISTEN took effect is unknown to the caches: start clean.
      this.opts.onChange(null);
    } catch (err) {
      this.opts.logger.warn({ err: (err as Error).name }, 'directory change listener unavailable; retrying');
      lost();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => undefined);
  }
}
