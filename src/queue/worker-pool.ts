import { AppError } from '../core/app-error';
import type { Logger } from '../observability/logger';
import type { ClaimedItem, WorkOutcome, WorkQueue, WorkType } from './work-queue';

/**
 * Runs one claimed item. Throwing = failed attempt; `retryable` on the error decides whether it runs again.
 * A handler that completed the item in its own last statement says so; otherwise the pool completes it.
 */
export type WorkHandler = (item: ClaimedItem) => Promise<WorkOutcome | void>;

export interface WorkerPoolOptions {
  queue: WorkQueue;
  handlers: Partial<Record<WorkType, WorkHandler>>;
  concurrency: number;
  logger: Logger;
  /** Poll interval when idle; a local wake-up (new item enqueued here) starts work at once. */
  pollMs?: number;
  /** Claim lifetime; running items are kept claimed with a heartbeat every third of it. */
  claimTtlMs: number;
  /** At most one database-outage alert per window. */
  alertWindowMs?: number;
  /** Maps an error to a (redacted) text and whether it is worth another attempt. */
  describeError: (err: unknown) => { text: string; retryable: boolean };
  /** Admin alert hooks (R-E2, R-O5): every failed claim, the first good claim after one, abandoned items. */
  onDatabaseDown?: (error: string) => void;
  onDatabaseUp?: () => void;
  onAbandoned?: (count: number) => void;
  /**
   * Priority for the intake in the same process ({@link Hold}): while it is busy, a loop waits before its next claim,
   * for at most `maxMs`; items already running go on.
   */
  hold?: Hold;
}

/** What the pool yields to: busy now, and a promise of the moment it is not. */
export interface Hold {
  busy(): boolean;
  whenIdle(): Promise<void>;
  /** Longest wait before a claim (so a steady overload of the intake cannot stop the turns). */
  maxMs: number;
}

/**
 * N concurrent claim loops over the work queue. Idle loops wait for a wake-up; the pool as a whole polls once
 * per `pollMs` (one idle loop claims), so items enqueued elsewhere — another instance's, a retry whose backoff
 * ended — are picked up within about `pollMs`, and an idle pool costs the database one claim per `pollMs`
 * whatever its concurrency (each loop polling on its own made an idle instance with 8 loops claim 16 times a
 * second). A loop the poll woke that found work wakes one more idle loop, so a backlog drains in parallel.
 */
export class WorkerPool {
  private running = false;
  private loops: Promise<void>[] = [];
  /** Idle loops, each woken with whether the poll woke it ({@link POLLED}) or a new item did. */
  private waiters: ((polled?: typeof POLLED) => void)[] = [];
  /** Wake-ups that found no idle loop (every loop was busy or between claims): owed a claim each. */
  private missedWakes = 0;
  /**
   * A claim found nothing while items were running: what it missed may be waiting behind one of them (one
   * conversation is processed in order), so the loop that finishes one claims again.
   */
  private behindRunning = false;
  /**
   * Items finished so far. A claim that found nothing while another loop finished an item may have looked at
   * the queue before that item was done: what waited behind it (a 「はい」 behind its request) is claimable now.
   */
  private completions = 0;
  private readonly inFlight = new Set<ClaimedItem>();
  /** Items whose handler returned: a heartbeat that finds them gone is not a lost claim. */
  private readonly finished = new WeakSet<ClaimedItem>();
  private readonly types: WorkType[];
  private lastAlertAt = 0;
  private lastSweepAt = 0;
  private databaseDown = false;
  private pollTimer: NodeJS.Timeout | null = null;
  /** The wait of the loops holding back for the intake ({@link holdBack}). */
  private holding: Promise<void> | null = null;

  constructor(private readonly opts: WorkerPoolOptions) {
    this.types = Object.keys(opts.handlers) as WorkType[];
  }

  /** Starts the claim loops; a pool with no handlers (a process that runs no work items) claims nothing. */
  start(): void {
    if (this.running || this.types.length === 0) return;
    this.running = true;
    for (let i = 0; i < this.opts.concurrency; i++) this.loops.push(this.loop(i));
    this.schedulePoll();
  }

  /** The pool's poll: every `pollMs` (jittered, so instances do not poll in step) one idle loop claims. */
  private schedulePoll(): void {
    const pollMs = this.opts.pollMs ?? 500;
    this.pollTimer = setTimeout(
      () => {
        this.pollTimer = null;
        if (!this.running) return;
        this.waiters.shift()?.(POLLED);
        this.schedulePoll();
      },
      pollMs * (0.75 + Math.random() * 0.5),
    );
  }

  /**
   * Signals that one new item exists (called by intake after a durable insert): one idle loop wakes,
   * so one item costs one claim, not one per worker.
   */
  wake(): void {
    // A pool that claims nothing (HISHO_ROLE=intake) keeps no wake-ups: another process's poll finds the item.
    if (this.types.length === 0) return;
    const waiter = this.waiters.shift();
    if (waiter) return waiter();
    this.missedWakes++;
  }

  /** {@link wake} for `n` new items (a sweep or a scheduler that enqueued several). */
  wakeMany(n: number): void {
    for (let i = 0; i < n; i++) this.wake();
  }

  /** Whether a loop owes a claim (a wake-up that found every loop busy): it claims again now rather than wait. */
  private owed(): boolean {
    if (this.missedWakes <= 0) return false;
    this.missedWakes--;
    return true;
  }

  private wakeAll(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }

  /** Stops claiming, waits for running items up to `graceMs`, then releases what is left. */
  async stop(graceMs = 8000): Promise<void> {
    this.running = false;
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = null;
    this.wakeAll();
    const all = Promise.all(this.loops);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      all.then(() => false),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(true), graceMs);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      for (const item of this.inFlight) {
        await this.opts.queue.release(item).catch(() => undefined);
      }
    }
    this.loops = [];
  }

  get busy(): number {
    return this.inFlight.size;
  }

  private async loop(index: number): Promise<void> {
    const pollMs = this.opts.pollMs ?? 500;
    let woken: typeof POLLED | undefined;
    while (this.running) {
      if (this.opts.hold?.busy()) {
        await this.holdBack(this.opts.hold);
        if (!this.running) break;
      }
      let item: ClaimedItem | null = null;
      const completionsBefore = this.completions;
      const polled = woken === POLLED;
      woken = undefined;
      try {
        item = await this.opts.queue.claim(this.types);
        // The poll found work nobody woke us for: more may be waiting (a backlog from another instance, retries
        // that came due together), so one more idle loop looks too, and so on while they find work.
        if (item && polled) this.waiters.shift()?.(POLLED);
      } catch (err) {
        // Database down: back off (no crash loop) and alert admins once per window (R-E2).
        const now = Date.now();
        const text = this.opts.describeError(err).text;
        if (now - this.lastAlertAt > (this.opts.alertWindowMs ?? 60000)) {
          this.lastAlertAt = now;
          this.opts.logger.error(
            { alert: 'db_unavailable', err: text },
            'ADMIN ALERT: work queue unreachable; workers are backing off',
          );
        }
        this.databaseDown = true;
        this.opts.onDatabaseDown?.(text);
        await sleep(Math.min(5000, pollMs * 8));
        continue;
      }
      if (this.databaseDown) {
        this.databaseDown = false;
        this.opts.onDatabaseUp?.();
      }
      if (!item) {
        if (this.inFlight.size > 0) this.behindRunning = true;
        // An item finished while this claim ran: the claim may have seen it still running, so what waits
        // behind it in its conversation was skipped. Look again now rather than at the next poll.
        if (this.completions !== completionsBefore) continue;
        if (Date.now() - this.lastSweepAt > 10000) {
          this.lastSweepAt = Date.now();
          const n = await this.opts.queue.failAbandoned().catch(() => 0);
          if (n > 0) {
            this.opts.logger.error(
              { alert: 'work_abandoned', count: n },
              'ADMIN ALERT: work items failed after repeated worker crashes',
            );
            this.opts.onAbandoned?.(n);
          }
        }
        if (this.owed()) continue;
        woken = await this.idle();
        continue;
      }
      await this.run(item, index);
      // Claim again only when something may be waiting: a wake that found every loop busy, or an item that an
      // empty claim could not take because it waits behind one that was running (its conversation's order).
      // Otherwise wait: the next item wakes exactly one loop, and other instances' items come with the poll.
      if (this.behindRunning) {
        this.behindRunning = this.inFlight.size > 0;
        continue;
      }
      if (this.owed()) continue;
      woken = await this.idle();
    }
  }

  /** Waits until the intake is idle, at most `maxMs`; the loops that wait share one timer. */
  private holdBack(hold: Hold): Promise<void> {
    this.holding ??= new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, hold.maxMs);
      void hold.whenIdle().then(() => {
        clearTimeout(timer);
        resolve();
      });
    }).finally(() => {
      this.holding = null;
    });
    return this.holding;
  }

  /**
   * Waits for a wake-up: a new item (resolves with nothing), or the pool's poll ({@link POLLED}: also when a loop
   * the poll woke found work).
   */
  private idle(): Promise<typeof POLLED | undefined> {
    if (!this.running) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.waiters.push(resolve);
    });
  }

  private async run(item: ClaimedItem, worker: number): Promise<void> {
    const handler = this.opts.handlers[item.type];
    this.inFlight.add(item);
    // A slow turn (LLM retries) must not look like a crashed worker: keep the claim alive while it runs. A
    // heartbeat that finds the claim gone (expired and possibly taken over) tells the handler to stop before
    // any further effect; the outbox checks the claim itself before posting.
    const beat = setInterval(
      () => {
        void this.opts.queue.heartbeat(item).then(
          (held) => {
            if (!held && !item.claimLost && !this.finished.has(item) && this.inFlight.has(item)) {
              item.claimLost = true;
              const ids = { workItemId: String(item.id), worker };
              this.opts.logger.warn(ids, 'claim lost while running: stopping before any further effect');
            }
          },
          () => undefined,
        );
      },
      Math.max(100, Math.floor(this.opts.claimTtlMs / 3)),
    );
    try {
      if (!handler) throw new AppError('INTERNAL', `no handler for ${item.type}`, { retryable: false });
      const outcome = await handler(item);
      this.finished.add(item);
      const ok = outcome?.completed === true || (await this.opts.queue.complete(item));
      if (!ok) this.opts.logger.warn({ workItemId: String(item.id), worker }, 'claim lost before completion');
    } catch (err) {
      const { text, retryable } = this.opts.describeError(err);
      const state = await this.opts.queue.fail(item, text, { retryable }).catch(() => 'lost' as const);
      this.opts.logger.warn(
        { workItemId: String(item.id), worker, attempts: item.attempts, state, err: text },
        'work item attempt failed',
      );
    } finally {
      clearInterval(beat);
      this.inFlight.delete(item);
      this.completions++;
    }
  }
}

/** What the pool's poll wakes a loop with: look, and pass it on if there is work. */
const POLLED = 'polled';

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
