import cron, { type ScheduledTask } from 'node-cron';
import type { Db } from '../../db/prisma';
import type { Sql } from '../../db/sql';
import type { Logger } from '../../observability/logger';
import type { Metrics } from '../../observability/metrics';
import { lastPeriods, recordPeriod } from '../schedule-store';
import { periodItems, type ScheduleRow } from './fire';
import { cronMatcher, floorMinute, planDue, type CronMatcher } from './periods';

export interface NoticeSchedulerOptions {
  db: Db;
  sql: Sql;
  logger: Logger;
  metrics?: Metrics;
  instanceId: string;
  /** Platforms with an enabled adapter (a schedule elsewhere is a start-up warning, not silence). */
  platforms: ReadonlySet<string>;
  /** A missed period older than this is skipped and counted, not sent. */
  catchUpHorizonMs: number;
  /** How often the schedules table is re-read (directory changes apply without a restart). */
  reloadMs: number;
  /** Called after work items were created (wakes local workers). */
  onEnqueued?: (n: number) => void;
  now?: () => Date;
}

/** Missed periods are looked for at most this far back. */
const LOOKBACK_MS = 7 * 24 * 3_600_000;

/** Why an enabled schedule cannot send (shown in the log at start and on the dashboard). */
export type ScheduleProblem =
  'no_room' | 'room_not_in_directory' | 'platform_not_enabled' | 'room_notices_off' | 'public_room';

interface Active {
  row: ScheduleRow;
  signature: string;
  matcher: CronMatcher;
  task: ScheduledTask | null;
  problem: ScheduleProblem | null;
  checkedUpTo: Date | null;
}

/** A schedule's state for the dashboard. */
export interface ScheduleStatus {
  id: string;
  orgId: string;
  kind: string;
  cron: string;
  timezone: string;
  room: string | null;
  enabled: boolean;
  problem: ScheduleProblem | null;
  nextRun: string | null;
}

/**
 * The clock of proactive notices (R-P1, R-P2). Every instance runs one node-cron task per enabled
 * schedule; a tick (or a catch-up check at start, on reload and every `reloadMs`) plans the newest due
 * period and records it together with its work items in one statement, so N instances fire each
 * period once, a period missed during downtime is caught up once, and older ones are counted as skipped.
 */
export class NoticeScheduler {
  private readonly active = new Map<string, Active>();
  private timer: NodeJS.Timeout | null = null;
  private readonly warned = new Set<string>();
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly o: NoticeSchedulerOptions) {}

  async start(): Promise<void> {
    await this.reload();
    this.timer = setInterval(() => {
      void this.reload().catch(() => undefined);
    }, this.o.reloadMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const a of this.active.values()) this.dispose(a);
    this.active.clear();
    await this.running.catch(() => undefined);
  }

  /** Re-reads the schedules (directory changes), re-creates changed clocks, then checks every schedule. */
  reload(): Promise<void> {
    return this.serial(async () => {
      const rows = await this.o.db.schedule.findMany({ where: { source: 'directory' }, orderBy: { id: 'asc' } });
      const rooms = await this.o.db.room.findMany({ where: { orgId: { in: [...new Set(rows.map((r) => r.orgId))] } } });
      const seen = new Set<string>();
      for (const row of rows) {
        seen.add(row.id);
        const room = rooms.find((r) => r.platform === row.platform && r.externalId === row.roomId) ?? null;
        const problem = this.problemOf(row, room);
        const signature = JSON.stringify([
          row.cron,
          row.timezone,
          row.enabled,
          row.platform,
          row.roomId,
          row.createdAt,
          problem,
        ]);
        const old = this.active.get(row.id);
        if (old && old.signature === signature) {
          old.row = row;
          continue;
        }
        if (old) this.dispose(old);
        this.active.set(row.id, this.create(row, signature, problem));
        if (row.enabled && problem) this.warn(row, problem);
      }
      for (const [id, a] of this.active) {
        if (!seen.has(id)) {
          this.dispose(a);
          this.active.delete(id);
        }
      }
      await this.checkAll();
    });
  }

  /** Checks every runnable schedule now (catch-up after start or a missed tick). */
  sweep(): Promise<void> {
    return this.serial(() => this.checkAll());
  }

  /** Dashboard view: every schedule with its problem and next run. */
  statuses(): ScheduleStatus[] {
    return [...this.active.values()].map(({ row, problem, matcher }) => ({
      id: row.id,
      orgId: row.orgId,
      kind: row.kind,
      cron: row.cron,
      timezone: row.timezone,
      room: row.platform && row.roomId ? `${row.platform}:${row.roomId}` : null,
      enabled: row.enabled,
      problem,
      nextRun: row.enabled && !problem ? (matcher.next()?.toISOString() ?? null) : null,
    }));
  }

  private create(row: ScheduleRow, signature: string, problem: ScheduleProblem | null): Active {
    const matcher = cronMatcher(row.cron, row.timezone);
    const a: Active = { row, signature, matcher, task: null, problem, checkedUpTo: null };
    if (row.enabled && !problem) {
      a.task = cron.schedule(
        row.cron,
        () => {
          void this.serial(() => this.check(a)).catch(() => undefined);
        },
        { name: `notice:${row.id}`, timezone: row.timezone, noOverlap: true },
      );
    }
    return a;
  }

  private dispose(a: Active): void {
    void a.task?.destroy();
    a.matcher.dispose();
  }

  private problemOf(
    row: ScheduleRow,
    room: { authority: string; noticesEnabled: boolean } | null,
  ): ScheduleProblem | null {
    if (!row.platform || !row.roomId) return 'no_room';
    if (!room) return 'room_not_in_directory';
    if (!this.o.platforms.has(row.platform)) return 'platform_not_enabled';
    if (!room.noticesEnabled) return 'room_notices_off';
    if (room.authority !== 'member') return 'public_room';
    return null;
  }

  private warn(row: ScheduleRow, problem: ScheduleProblem): void {
    const key = `${row.id}:${problem}`;
    if (this.warned.has(key)) return;
    this.warned.add(key);
    const why: Record<ScheduleProblem, string> = {
      no_room: 'it names no room',
      room_not_in_directory: 'its room is not in the directory',
      platform_not_enabled: `${row.platform} is not configured on any enabled adapter`,
      room_notices_off: 'its room has notices: false',
      public_room: 'its room is public (notices carry internal data)',
    };
    this.o.logger.warn(
      { schedule: row.id, kind: row.kind, problem },
      `schedule "${row.id}" will not send: ${why[problem]}`,
    );
  }

  private async checkAll(): Promise<void> {
    const runnable = [...this.active.values()].filter((a) => a.row.enabled && !a.problem);
    const last = await lastPeriods(
      this.o.sql,
      runnable.map((a) => a.row.id),
    );
    for (const a of runnable) {
      try {
        await this.checkOne(a, last.get(a.row.id) ?? null);
      } catch (err) {
        this.o.logger.warn(
          { schedule: a.row.id, err: (err as Error).name },
          'schedule check failed; trying again on the next tick',
        );
      }
    }
  }

  private async check(a: Active): Promise<void> {
    if (!this.active.has(a.row.id) || this.active.get(a.row.id) !== a) return;
    const last = await lastPeriods(this.o.sql, [a.row.id]);
    await this.checkOne(a, last.get(a.row.id) ?? null);
  }

  /** Plans and records the schedule's newest due period (fire, catch up or skip). */
  private async checkOne(a: Active, lastPeriod: Date | null): Promise<void> {
    const now = this.o.now?.() ?? new Date();
    const plan = planDue({
      matcher: a.matcher,
      now,
      lastPeriod,
      createdAt: a.row.createdAt,
      checkedUpTo: a.checkedUpTo,
      horizonMs: this.o.catchUpHorizonMs,
      lookbackMs: LOOKBACK_MS,
    });
    if (plan.action === 'none') {
      a.checkedUpTo = floorMinute(now);
      return;
    }
    const { row } = a;
    const items =
      plan.action === 'fire'
        ? await periodItems(this.o.db, row as ScheduleRow & { platform: string; roomId: string }, plan.period, now)
        : [];
    const status = plan.action === 'fire' ? plan.status : 'skipped';
    const res = await recordPeriod(
      this.o.sql,
      { scheduleId: row.id, period: plan.period, status, skipped: plan.skipped, instanceId: this.o.instanceId },
      items,
    );
    a.checkedUpTo = floorMinute(now);
    if (!res.claimed) return;
    if (plan.skipped > 0) this.o.metrics?.schedulePeriods.inc({ schedule: row.id, status: 'skipped' }, plan.skipped);
    if (plan.action === 'skip') {
      this.o.logger.warn(
        { schedule: row.id, period: plan.period.toISOString(), skipped: plan.skipped },
        'missed schedule periods are older than the catch-up horizon: skipped',
      );
      return;
    }
    this.o.metrics?.schedulePeriods.inc({ schedule: row.id, status });
    this.o.logger.info(
      { schedule: row.id, period: plan.period.toISOString(), status, skipped: plan.skipped, notices: res.enqueued },
      'schedule period fired',
    );
    if (res.enqueued > 0) this.o.onEnqueued?.(res.enqueued);
  }

  /** One check at a time per instance (ticks, sweeps and reloads never interleave). */
  private serial(fn: () => Promise<void>): Promise<void> {
    const next = this.running.then(fn, fn);
    this.running = next.catch(() => undefined);
    return next;
  }
}
