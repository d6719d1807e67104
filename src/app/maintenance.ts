import cron, { type ScheduledTask } from 'node-cron';
import type { Db } from '../db/prisma';
import type { Logger } from '../observability/logger';
import { purgeExpired, type RetentionPolicy } from './retention';
import { localDate } from '../core/zoned-time';
import { claimFireKey } from '../scheduler/schedule-store';

/**
 * Daily maintenance (retention purge, R-O2) at 03:30 in the bot's time zone. Several instances may run
 * this schedule; the fire key makes one of them do the work each day.
 */
export function scheduleMaintenance(opts: {
  db: Db;
  logger: Logger;
  timezone: string;
  policy: RetentionPolicy;
}): ScheduledTask {
  return cron.schedule(
    '30 3 * * *',
    async () => {
      const day = localDate(new Date(), opts.timezone);
      try {
        if (!(await claimFireKey(opts.db, 'system:retention', `system:retention:${day}`))) return;
        const result = await purgeExpired(opts.db, opts.policy);
        opts.logger.info({ job: 'retention', ...result }, 'retention purge done');
      } catch (err) {
        opts.logger.error(
          { job: 'retention', err: (err as Error).name },
          'retention purge failed; it runs again tomorrow',
        );
      }
    },
    { name: 'retention', timezone: opts.timezone, noOverlap: true },
  );
}
