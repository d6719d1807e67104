import type { EventLoopUtilization } from 'node:perf_hooks';
import type { WorkerPoolOptions } from './worker-pool';

/** What a worker thread needs to read the main thread's counter (it crosses threads in the worker's data). */
export interface SharedIntakePressure {
  buffer: SharedArrayBuffer;
  yieldAt: number;
  maxHoldMs: number;
  busyAt: number;
}

/** The shortest stretch the intake thread's load is read over (ms); a reading is taken when a webhook arrives. */
const LOAD_WINDOW_MS = 5;
/** How long one reading of a busy intake thread holds turns back (ms): a burst renews it with every window. */
const BUSY_VALID_MS = 20;
/**
 * Webhooks that must have arrived within a reading's window for a busy thread to hold turns back: a stream of them,
 * not one message arriving after the thread was busy with something else (with `WORKERS=0`, the turns themselves).
 */
const BURST_ARRIVALS = 4;

/**
 * Whether the intake thread is swamped right now, readable from every thread without a message. Two signs, either
 * enough: many webhooks being answered at once (a counter), or the intake thread's event loop busy most of the last
 * few milliseconds while webhooks keep arriving (its event-loop utilisation, read at a webhook's arrival at most
 * every {@link LOAD_WINDOW_MS}; it counts when {@link BURST_ARRIVALS} or more arrived since the last reading). The
 * second matters most in a burst: a saturated intake thread has few webhooks in flight — the rest wait in the
 * kernel's accept queue and socket buffers, where no counter sees them — so in a measured burst the counter stayed
 * under 16 most of the time while the acknowledgements waited 40–80 ms. While either sign holds, the worker pools
 * hold back new claims for a moment (`WorkerPool`'s `holdWhile`), so the intake's inserts and answers get the cores
 * and the database first; turns already running go on, and nothing is lost (every held item is stored and claimed a
 * few milliseconds later).
 */
export class IntakePressure {
  private readonly count: Int32Array;
  /** Until when (epoch ms) the last reading of the intake thread's load holds turns back. */
  private readonly busyUntil: BigInt64Array;
  private loadReadAt = -Infinity;
  private arrivals = 0;
  private lastLoad: EventLoopUtilization | undefined;

  /**
   * @param yieldAt - Webhooks in flight from which turns wait (0: never, neither for the count nor for the load).
   * @param maxHoldMs - The longest a worker pool holds back at a time.
   * @param buffer - The shared state, when another thread created it (a worker thread gets the main thread's).
   * @param busyAt - The intake thread's event-loop utilisation (0–1) from which turns wait (0: the count only).
   */
  constructor(
    readonly yieldAt: number,
    readonly maxHoldMs = 200,
    readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(16),
    readonly busyAt = 0.7,
  ) {
    this.count = new Int32Array(buffer, 0, 1);
    this.busyUntil = new BigInt64Array(buffer, 8, 1);
  }

  /** The same state in another thread. */
  static from(s: SharedIntakePressure): IntakePressure {
    return new IntakePressure(s.yieldAt, s.maxHoldMs, s.buffer, s.busyAt);
  }

  /** What {@link from} needs in another thread. */
  shared(): SharedIntakePressure {
    return { buffer: this.buffer, yieldAt: this.yieldAt, maxHoldMs: this.maxHoldMs, busyAt: this.busyAt };
  }

  /** A worker pool's options to hold back while this is high (none when `yieldAt` is 0). */
  holdOptions(): Pick<WorkerPoolOptions, 'holdWhile' | 'maxHoldMs'> {
    return this.yieldAt > 0 ? { holdWhile: () => this.high(), maxHoldMs: this.maxHoldMs } : {};
  }

  /**
   * A webhook arrived (call it on the intake thread): counted until {@link leave}, and the intake thread's load read
   * when the last reading is {@link LOAD_WINDOW_MS} old.
   */
  enter(): void {
    Atomics.add(this.count, 0, 1);
    if (this.busyAt > 0) this.readLoad();
  }

  leave(): void {
    Atomics.sub(this.count, 0, 1);
  }

  get inFlight(): number {
    return Atomics.load(this.count, 0);
  }

  /** Whether new turns should wait now. */
  high(): boolean {
    if (this.yieldAt <= 0) return false;
    return Atomics.load(this.count, 0) >= this.yieldAt || Atomics.load(this.busyUntil, 0) > BigInt(Date.now());
  }

  private readLoad(): void {
    this.arrivals++;
    const now = performance.now();
    if (now - this.loadReadAt < LOAD_WINDOW_MS) return;
    const load = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(load, this.lastLoad);
    const burst = this.arrivals >= BURST_ARRIVALS;
    this.arrivals = 0;
    if (this.lastLoad && burst && utilization >= this.busyAt)
      Atomics.store(this.busyUntil, 0, BigInt(Date.now() + BUSY_VALID_MS));
    this.lastLoad = load;
    this.loadReadAt = now;
  }
}
