import cron, { type ScheduledTask } from 'node-cron';

/** A schedule period is one minute: cron expressions have five fields (directory.schema.ts). */
export const MINUTE_MS = 60_000;

/** A cron expression in a time zone, used as a clock face: does a minute match, when is the next one. */
export interface CronMatcher {
  /** True when the minute starting at `minute` is one of the schedule's periods. */
  matches(minute: Date): boolean;
  /** The next period after the real current time (for the dashboard). */
  next(): Date | null;
  dispose(): void;
}

/** node-cron's own matcher (the same code that fires the schedule), from a task that is never started. */
export function cronMatcher(expression: string, timezone: string): CronMatcher {
  const task: ScheduledTask = cron.createTask(expression, () => undefined, { timezone });
  return {
    matches: (minute) => task.match(minute),
    next: () => task.getNextRuns(1)[0] ?? null,
    dispose: () => void task.destroy(),
  };
}

/** The start of the minute `d` falls in. */
export function floorMinute(d: Date): Date {
  return new Date(Math.floor(d.getTime() / MINUTE_MS) * MINUTE_MS);
}

/** The first whole minute at or after `d`. */
export function ceilMinute(d: Date): Date {
  return new Date(Math.ceil(d.getTime() / MINUTE_MS) * MINUTE_MS);
}

/** What to do about a schedule now. */
export type DuePlan =
  /** Nothing is due (the newest period is already accounted for). */
  | { action: 'none' }
  /** Send the period: `fired` on time, `caught_up` after downtime; `skipped` earlier missed periods are counted. */
  | { action: 'fire'; period: Date; status: 'fired' | 'caught_up'; skipped: number }
  /** Every missed period is older than the horizon: record them as skipped, send nothing. */
  | { action: 'skip'; period: Date; skipped: number };

export interface PlanInput {
  matcher: Pick<CronMatcher, 'matches'>;
  now: Date;
  /** The newest period already recorded for this schedule (any status), if any. */
  lastPeriod: Date | null;
  /** Periods before the schedule existed never fire. */
  createdAt: Date;
  /** Minutes up to here were already looked at by this process and held no unrecorded period. */
  checkedUpTo?: Date | null;
  /** A missed period older than this is skipped, not sent. */
  horizonMs: number;
  /** How far back missed periods are counted at most (bounds the walk). */
  lookbackMs: number;
}

/**
 * Exactly one decision per schedule and moment (R-P2): of all periods since the last recorded one, only
 * the newest may be sent — on time, or caught up once after downtime — and only inside the horizon;
 * every other missed period is counted as skipped. Pure apart from the matcher; minute resolution.
 */
export function planDue(input: PlanInput): DuePlan {
  const { matcher, now, horizonMs, lookbackMs } = input;
  const end = floorMinute(now).getTime();
  const starts = [ceilMinute(input.createdAt).getTime(), end - lookbackMs];
  if (input.lastPeriod) starts.push(input.lastPeriod.getTime() + MINUTE_MS);
  if (input.checkedUpTo) starts.push(input.checkedUpTo.getTime() + MINUTE_MS);
  let count = 0;
  let latest: number | null = null;
  for (let t = Math.max(...starts); t <= end; t += MINUTE_MS) {
    if (!matcher.matches(new Date(t))) continue;
    count++;
    latest = t;
  }
  if (latest === null) return { action: 'none' };
  const period = new Date(latest);
  if (now.getTime() - latest > horizonMs) return { action: 'skip', period, skipped: count };
  return { action: 'fire', period, status: latest === end ? 'fired' : 'caught_up', skipped: count - 1 };
}
