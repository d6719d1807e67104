/**
 * Client-side rate limiting for the ChatWork API (PLATFORMS.md A5): the global per-token budget as
 * reported by `x-ratelimit-*` headers, and the per-room posting limit (10 posts / 10 s per room).
 */

/** Injectable time source and sleep, so tests can run without real waiting. */
export interface Timer {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

/**
 * Sliding-window limiter per key that queues callers (FIFO per key) instead of failing them.
 */
export class KeyedWindowLimiter {
  private readonly stamps = new Map<string, number[]>();
  private readonly tails = new Map<string, Promise<void>>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly timer: Timer,
  ) {}

  /**
   * Resolves when a request for `key` may be sent; the slot is taken at that moment. Resolves with how long the
   * caller was held back by the window (ms, counted from the call, its turn in the queue included): 0 when its
   * slot was free when its turn came.
   */
  acquire(key: string): Promise<number> {
    const asked = this.timer.now();
    const prev = this.tails.get(key) ?? Promise.resolve();
    const next = prev.then(() => this.takeSlot(key)).then((slept) => (slept ? this.timer.now() - asked : 0));
    // The chain must survive a rejected sleep; the caller still sees its own rejection.
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }

  /** Takes a slot for `key`, sleeping until one is free; whether it had to sleep. */
  private async takeSlot(key: string): Promise<boolean> {
    for (let slept = false; ; slept = true) {
      const now = this.timer.now();
      const recent = (this.stamps.get(key) ?? []).filter((t) => t > now - this.windowMs);
      if (recent.length < this.max) {
        recent.push(now);
        this.stamps.set(key, recent);
        return slept;
      }
      this.stamps.set(key, recent);
      const oldest = recent[0] ?? now;
      await this.timer.sleep(Math.max(1, oldest + this.windowMs - now));
    }
  }
}

/**
 * The global budget as last reported by ChatWork. Each request reserves one unit so that concurrent
 * callers do not all spend the last one; a fresh response overwrites the estimate.
 */
export class GlobalRateBudget {
  private remaining: number | undefined;
  private resetAtMs: number | undefined;

  constructor(
    private readonly timer: Timer,
    private readonly maxWaitMs: number,
  ) {}

  /** Waits until the reset time when the budget is spent, then reserves one request. Returns the wait. */
  async reserve(): Promise<number> {
    let waited = 0;
    const now = this.timer.now();
    if (this.resetAtMs !== undefined && now >= this.resetAtMs) this.forget();
    if (this.remaining !== undefined && this.remaining <= 0 && this.resetAtMs !== undefined) {
      // Capped: a bogus far-future reset must not stall the bot; the server will 429 if we are early.
      waited = Math.min(this.resetAtMs - now, this.maxWaitMs);
      await this.timer.sleep(waited);
      this.forget();
    }
    if (this.remaining !== undefined) this.remaining -= 1;
    return waited;
  }

  /** Records `x-ratelimit-remaining` / `x-ratelimit-reset` (Unix seconds) from a response. */
  update(headers: Headers): void {
    const remaining = Number(headers.get('x-ratelimit-remaining') ?? NaN);
    const reset = Number(headers.get('x-ratelimit-reset') ?? NaN);
    if (Number.isFinite(remaining) && Number.isFinite(reset)) {
      this.remaining = remaining;
      this.resetAtMs = reset * 1000;
    }
  }

  /** Drops the estimate (after waiting for a reset). */
  forget(): void {
    this.remaining = undefined;
    this.resetAtMs = undefined;
  }
}

/** Milliseconds until the `x-ratelimit-reset` of a response, or undefined when absent or past. */
export function msUntilReset(headers: Headers, now: number): number | undefined {
  const reset = Number(headers.get('x-ratelimit-reset') ?? NaN);
  if (!Number.isFinite(reset)) return undefined;
  const ms = reset * 1000 - now;
  return ms > 0 ? ms : undefined;
}
