import type { Db } from '../db/prisma';

/**
 * Exactly-once across instances for a scheduled run (R-Q4): the first instance to insert the fire key
 * runs the job; the others see the key and skip it. Fire keys name the job and its period.
 */
export async function claimFireKey(db: Db, scheduleId: string, fireKey: string): Promise<boolean> {
  const res = await db.scheduleRun.createMany({ data: [{ fireKey, scheduleId }], skipDuplicates: true });
  return res.count === 1;
}
