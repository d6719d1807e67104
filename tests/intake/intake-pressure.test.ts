import { Worker } from 'node:worker_threads';
import { IntakePressure } from '../../src/intake/intake-pressure';

describe('IntakePressure', () => {
  it('is high from yieldAt webhooks in flight, and never when yieldAt is 0', () => {
    const p = new IntakePressure(3);
    const off = new IntakePressure(0, 200, p.buffer);
    p.enter();
    p.enter();
    expect(p.high()).toBe(false);
    p.enter();
    expect([p.inFlight, p.high(), off.high()]).toEqual([3, true, false]);
    p.leave();
    expect(p.high()).toBe(false);
  });

  it('a worker thread reads the main thread’s count through the shared buffer, without a message', async () => {
    const p = new IntakePressure(2);
    // The worker waits until it sees two webhooks in flight, then until it sees none.
    const worker = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       const count = new Int32Array(workerData);
       parentPort.postMessage('ready');
       while (Atomics.load(count, 0) < 2) Atomics.wait(count, 0, Atomics.load(count, 0), 5);
       while (Atomics.load(count, 0) > 0) Atomics.wait(count, 0, Atomics.load(count, 0), 5);
       parentPort.postMessage('saw 2 then 0');`,
      { eval: true, workerData: p.buffer },
    );
    const said: string[] = [];
    const done = new Promise<void>((resolve, reject) => {
      worker.on('message', (m: string) => {
        said.push(m);
        if (m === 'ready') {
          p.enter();
          p.enter();
          setTimeout(() => {
            p.leave();
            p.leave();
          }, 50);
        } else resolve();
      });
      worker.on('error', reject);
    });
    await done;
    await worker.terminate();
    expect(said).toEqual(['ready', 'saw 2 then 0']);
  });
});
