import { PgListener } from '../db/pg-listener';
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
  private readonly listener: PgListener;

  constructor(opts: DirectoryChangesOptions) {
    this.listener = new PgListener({
      connectionString: opts.connectionString,
      logger: opts.logger,
      channel: DIRECTORY_CHANNEL,
      retryMs: opts.retryMs,
      unavailable: 'directory change listener unavailable; retrying',
      onNotice: (orgId) => opts.onChange(orgId || null),
      // Anything imported before LISTEN took effect, or while the connection was down, is unknown: start clean.
      onListening: () => opts.onChange(null),
      onLost: () => opts.onChange(null),
    });
  }

  start(): Promise<void> {
    return this.listener.start();
  }

  stop(): Promise<void> {
    return this.listener.stop();
  }
}
