import { Client } from 'pg';
import type { Logger } from '../observability/logger';

/**
 * The Postgres channel an intake-only process (`HISHO_ROLE=intake`) notifies when it stored work items (payload:
 * their ids, comma-separated), on commit: a turns process wakes a claim loop at once instead of at its next poll.
 */
export const WORK_CHANNEL = 'hisho_work';

export interface WorkNoticesOptions {
  connectionString: string;
  logger: Logger;
  /** Items were stored by another process (their ids). */
  onStored: (ids: bigint[]) => void;
  /** Wait before listening again after the connection dropped (default 1 s). */
  retryMs?: number;
}

/**
 * Listens for {@link WORK_CHANNEL} on a dedicated connection (LISTEN needs one that stays open). The worker pool's
 * poll stays the fallback: while the connection is down, or for a notice lost with it, items are found by the
 * poll within about its interval.
 */
export class WorkNotices {
  private client: Client | null = null;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(private readonly opts: WorkNoticesOptions) {}

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
      if (this.stopped) return;
      this.retry = setTimeout(() => void this.start(), this.opts.retryMs ?? 1000);
      this.retry.unref();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (n) => {
      if (n.channel !== WORK_CHANNEL || !n.payload) return;
      const ids = n.payload.split(',').flatMap((s) => (/^\d+$/.test(s) ? [BigInt(s)] : []));
      if (ids.length > 0) this.opts.onStored(ids);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${WORK_CHANNEL}`);
    } catch (err) {
      this.opts.logger.warn({ err: (err as Error).name }, 'work notice listener unavailable; polling meanwhile');
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
