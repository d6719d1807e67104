import { Client } from 'pg';
import type { Logger } from '../observability/logger';

export interface PgListenerOptions {
  connectionString: string;
  logger: Logger;
  /** The Postgres channel to LISTEN on. */
  channel: string;
  /** A notice on the channel (its payload; '' when it had none). */
  onNotice: (payload: string) => void;
  /** LISTEN is in place (again): anything sent before it was not heard. */
  onListening?: () => void;
  /** The connection was lost: nothing can be heard until listening resumes. */
  onLost?: () => void;
  /** The log line when the connection cannot be made or drops. */
  unavailable: string;
  /** Wait before listening again after the connection dropped (default 1 s). */
  retryMs?: number;
}

/**
 * LISTEN on a dedicated connection (it must stay open; the pool's connections come and go). A dropped connection
 * is reported (`onLost`) and listening resumes on its own after `retryMs`.
 */
export class PgListener {
  private client: Client | null = null;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(private readonly opts: PgListenerOptions) {}

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
      this.opts.onLost?.();
      if (this.stopped) return;
      this.retry = setTimeout(() => void this.start(), this.opts.retryMs ?? 1000);
      this.retry.unref();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (n) => {
      if (n.channel === this.opts.channel) this.opts.onNotice(n.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.opts.channel}`);
      this.opts.onListening?.();
    } catch (err) {
      this.opts.logger.warn({ err: (err as Error).name }, this.opts.unavailable);
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
