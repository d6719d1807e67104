import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { IntakePressure } from '../../src/intake/intake-pressure';

const MODULE = path.resolve(__dirname, '../../src/intake/intake-pressure.ts');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Keeps this thread's event loop busy for `ms`, as a swamped intake thread is between two webhooks. */
const busyFor = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};
/**
 * Webhooks arriving every half millisecond at a thread busy in between, until `done` (at most 2 s): a reading of the
 * thread's load is taken every 5 ms, and a machine busy with other tests may deschedule this thread for a while.
 */
const arriveAtBusyThread = (arrive: () => void, done: () => boolean) => {
  const until = performance.now() + 2000;
  while (!done() && performance.now() < until) {
    arrive();
    busyFor(0.5);
  }
};

describe('IntakePressure', () => {
  it('is high from yieldAt webhooks in flight, and never when yieldAt is 0', () => {
    const p = new IntakePressure(3, 200, undefined, 0);
    const off = new IntakePressure(0, 200, p.buffer);
    p.enter();
    p.enter();
    expect(p.high()).toBe(false);
    p.enter();
    expect([p.inFlight, p.high(), off.high()]).toEqual([3, true, false]);
    p.leave();
    expect(p.high()).toBe(false);
  });

  it('is high for a moment when webhooks arrive at a busy intake thread, with few of them in flight', async () => {
    // A swamped intake thread answers each webhook quickly once it gets to it: one or two are in flight, the rest
    // wait in the kernel. What shows is its event loop, busy between two arrivals.
    const p = new IntakePressure(16);
    const arrive = () => {
      p.enter();
      p.leave();
    };
    arriveAtBusyThread(arrive, () => p.high());
    expect([p.inFlight, p.high()]).toEqual([0, true]);
    // The reading holds turns back for a moment only: with no webhook arriving it lapses.
    await sleep(40);
    expect(p.high()).toBe(false);
    // Webhooks arriving at an idle intake thread hold nothing back, however many arrive together.
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 5; i++) {
        p.enter();
        p.leave();
      }
      await sleep(20);
    }
    expect(p.high()).toBe(false);
    // Nor does one message arriving after the thread was busy with something else (with WORKERS=0, a turn).
    await sleep(10);
    arrive();
    busyFor(10);
    arrive();
    expect(p.high()).toBe(false);
  });

  it('reads the load only as configured: busyAt 0 (the count only), yieldAt 0 (off altogether)', () => {
    const countOnly = new IntakePressure(16, 200, undefined, 0);
    const off = new IntakePressure(0, 200, undefined, 0.7);
    for (const p of [countOnly, off]) {
      p.enter();
      busyFor(8);
      for (let i = 0; i < 4; i++) p.enter();
    }
    expect([countOnly.high(), off.high()]).toEqual([false, false]);
  });

  it('a worker thread reads the main thread’s state through the shared buffer, without a message', async () => {
    const p = new IntakePressure(2);
    // The worker (IntakePressure.from, as a turn worker thread builds it) waits until it sees the pressure high
    // from two webhooks in flight, then low, then high again from a busy intake thread (while that lasts, this
    // thread cannot read messages: the worker says it saw it in `seen`).
    const seen = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(
      `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register();
       const { workerData, parentPort } = require('node:worker_threads');
       const { IntakePressure } = require(${JSON.stringify(MODULE)});
       const p = IntakePressure.from(workerData.pressure);
       const nap = new Int32Array(new SharedArrayBuffer(4));
       const until = (want) => { while (p.high() !== want) Atomics.wait(nap, 0, 0, 1); };
       parentPort.postMessage('ready');
       until(true);
       parentPort.postMessage('high: ' + p.inFlight + ' in flight');
       until(false);
       parentPort.postMessage('low');
       until(true);
       Atomics.store(new Int32Array(workerData.seen), 0, p.inFlight + 1);`,
      { eval: true, workerData: { pressure: p.shared(), seen: seen.buffer } },
    );
    const said: string[] = [];
    const done = new Promise<void>((resolve, reject) => {
      worker.on('message', (m: string) => {
        said.push(m);
        if (m === 'ready') {
          p.enter();
          p.enter();
        } else if (m === 'high: 2 in flight') {
          p.leave();
          p.leave();
        } else if (m === 'low') {
          const arrive = () => {
            p.enter();
            p.leave();
          };
          arriveAtBusyThread(arrive, () => Atomics.load(seen, 0) !== 0);
          resolve();
        }
      });
      worker.on('error', reject);
    });
    await done;
    await worker.terminate();
    expect(said).toEqual(['ready', 'high: 2 in flight', 'low']);
    // It saw the pressure high with no webhook in flight (stored as in flight + 1).
    expect(Atomics.load(seen, 0)).toBe(1);
  });
});
