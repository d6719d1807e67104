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
   * @param buffer - The shared counter, when another thread created it (a worker thread gets the main thread's).
   */
  constructor(
    readonly yieldAt: number,
    readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(4),
  ) {
    this.count = new Int32Array(buffer);
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
