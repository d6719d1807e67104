import { PgListener } from '../db/pg-listener';
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
  /** Listening (again): items stored before LISTEN took effect were not heard; look for them now. */
  onListening?: () => void;
  /** Wait before listening again after the connection dropped (default 1 s). */
  retryMs?: number;
}

/**
 * Listens for {@link WORK_CHANNEL} on a dedicated connection. The worker pool's poll stays the fallback: while the
 * connection is down, or for a notice lost with it, items are found by the poll within about its interval.
 */
export class WorkNotices {
  private readonly listener: PgListener;

  constructor(opts: WorkNoticesOptions) {
    this.listener = new PgListener({
      connectionString: opts.connectionString,
      logger: opts.logger,
      channel: WORK_CHANNEL,
      retryMs: opts.retryMs,
      unavailable: 'work notice listener unavailable; polling meanwhile',
      onListening: opts.onListening,
      onNotice: (payload) => {
        const ids = payload.split(',').flatMap((s) => (/^\d+$/.test(s) ? [BigInt(s)] : []));
        if (ids.length > 0) opts.onStored(ids);
      },
    });
  }

  start(): Promise<void> {
    return this.listener.start();
  }

  stop(): Promise<void> {
    return this.listener.stop();
  }
}
