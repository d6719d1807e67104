import { GlobalRateBudget, KeyedWindowLimiter, msUntilReset } from '../../../src/adapters/chatwork/rate-limiter';
import { fakeTimer } from './fake-timer';

describe('KeyedWindowLimiter', () => {
  it('queues callers per key in order and lets other keys through', async () => {
    const timer = fakeTimer(0);
    const limiter = new KeyedWindowLimiter(2, 1000, timer);
    const order: string[] = [];
    await Promise.all(
      ['a1', 'a2', 'a3', 'b1', 'a4', 'a5'].map((name) =>
        limiter.acquire(name[0]!).then(() => order.push(`${name}@${timer.now()}`)),
      ),
    );
    expect(order.filter((o) => o.startsWith('a'))).toEqual(['a1@0', 'a2@0', 'a3@1000', 'a4@1000', 'a5@2000']);
    expect(order).toContain('b1@0');
  });

  it('says how long each caller waited for its slot', async () => {
    const timer = fakeTimer(0);
    const limiter = new KeyedWindowLimiter(2, 1000, timer);
    const waits = await Promise.all(['a', 'a', 'a', 'b'].map((k) => limiter.acquire(k)));
    expect(waits).toEqual([0, 0, 1000, 0]);
  });
});

describe('GlobalRateBudget', () => {
  const headers = (remaining: number, resetS: number) =>
    new Headers({ 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': String(resetS) });

  it('reserves the last unit once and makes the next caller wait for the reset', async () => {
    const timer = fakeTimer(10_000);
    const budget = new GlobalRateBudget(timer, 60_000);
    budget.update(headers(1, 40));
    expect(await budget.reserve()).toBe(0);
    expect(await budget.reserve()).toBe(30_000);
    expect(await budget.reserve()).toBe(0);
  });

  it('caps the wait and forgets a past reset', async () => {
    const timer = fakeTimer(0);
    const budget = new GlobalRateBudget(timer, 5_000);
    budget.update(headers(0, 3600));
    expect(await budget.reserve()).toBe(5_000);
    budget.update(headers(0, 1));
    timer.state.t = 2_000;
    expect(await budget.reserve()).toBe(0);
  });

  it('ignores missing or non-numeric headers', async () => {
    const budget = new GlobalRateBudget(fakeTimer(0), 5_000);
    budget.update(new Headers({ 'x-ratelimit-remaining': 'soon' }));
    expect(await budget.reserve()).toBe(0);
  });
});

describe('msUntilReset', () => {
  it('is the time to the reset, or undefined when absent or past', () => {
    expect(msUntilReset(new Headers({ 'x-ratelimit-reset': '12' }), 10_000)).toBe(2_000);
    expect(msUntilReset(new Headers({ 'x-ratelimit-reset': '5' }), 10_000)).toBeUndefined();
    expect(msUntilReset(new Headers(), 10_000)).toBeUndefined();
  });
});
