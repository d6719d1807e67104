import type { WorkerPoolOptions } from './worker-pool';

/** What a worker thread needs to read the main thread's counter (it crosses threads in the worker's data). */
export interface SharedIntakePressure {
  buffer: SharedArrayBuffer;
  yieldAt: number;
  maxHoldMs: number;
}

/**
 * How many webhooks the intake thread is answering right now, readable from every thread without a message
 * (one shared counter). While a burst keeps many in flight, the worker pools hold back new claims for a moment
 * (`WorkerPool`'s `holdWhile`), so the intake's inserts and answers get the cores and the database first; turns
 * already running go on, and nothing is lost (every held item is stored and claimed a few milliseconds later).
 */
export class IntakePressure {
  private readonly count: Int32Array;

  /**
   * @param yieldAt - Webhooks in flight from which turns wait (0: never).
   * @param maxHoldMs - The longest a worker pool holds back at a time.
   * @param buffer - The shared counter, when another thread created it (a worker thread gets the main thread's).
   */
  constructor(
    readonly yieldAt: number,
    readonly maxHoldMs = 200,
    readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(4),
  ) {
    this.count = new Int32Array(buffer);
  }

  /** The same counter in another thread. */
  static from(s: SharedIntakePressure): IntakePressure {
    return new IntakePressure(s.yieldAt, s.maxHoldMs, s.buffer);
  }

  /** What {@link from} needs in another thread. */
  shared(): SharedIntakePressure {
    return { buffer: this.buffer, yieldAt: this.yieldAt, maxHoldMs: this.maxHoldMs };
  }

  /** A worker pool's options to hold back while this is high (none when `yieldAt` is 0). */
  holdOptions(): Pick<WorkerPoolOptions, 'holdWhile' | 'maxHoldMs'> {
    return this.yieldAt > 0 ? { holdWhile: () => this.high(), maxHoldMs: this.maxHoldMs } : {};
  }

  /** A webhook arrived: call {@link leave} once when it has been answered (or its connection closed). */
  enter(): void {
    Atomics.add(this.count, 0, 1);
  }

  leave(): void {
    Atomics.sub(this.count, 0, 1);
  }

  get inFlight(): number {
    return Atomics.load(this.count, 0);
  }

  /** Whether new turns should wait now. */
  high(): boolean {
    return this.yieldAt > 0 && Atomics.load(this.count, 0) >= this.yieldAt;
  }
}
