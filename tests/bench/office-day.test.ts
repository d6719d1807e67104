import { CacheSim, officeArrivals, seeded, simulateDay, type SimRequest } from '../../bench/office-day';

/** A request whose prefix is 1,000 tokens of tools and 500 of system text, then 300 tokens of messages. */
const request = (ttl: '5m' | '1h', model = 'claude-opus-5-5'): SimRequest => ({
  model,
  breakpoints: [
    { key: 'tools', tokens: 1000, ttl },
    { key: 'system', tokens: 1500, ttl },
  ],
  promptTokens: 1800,
  outputTokens: 400,
});

describe('the prompt cache of the cost bench', () => {
  it('writes the prefix once, reads it within its lifetime, writes it again after a longer quiet', () => {
    const cache = new CacheSim();
    expect(cache.request(request('5m'), 0)).toMatchObject({ cacheWriteTokens: 1500, cacheReadTokens: 0 });
    expect(cache.request(request('5m'), 240)).toMatchObject({ cacheWriteTokens: 0, cacheReadTokens: 1500 });
    // A read keeps it five more minutes: 8 minutes after the write, 4 after the read.
    expect(cache.request(request('5m'), 480)).toMatchObject({ cacheReadTokens: 1500, inputTokens: 300 });
    expect(cache.request(request('5m'), 480 + 301)).toMatchObject({ cacheWriteTokens: 1500, cacheReadTokens: 0 });
  });

  it('an hour-long prefix survives a 30-minute quiet, and its writes are counted as such', () => {
    const cache = new CacheSim();
    expect(cache.request(request('1h'), 0)).toMatchObject({ cacheWriteTokens: 1500, cacheWrite1hTokens: 1500 });
    expect(cache.request(request('1h'), 1800)).toMatchObject({ cacheReadTokens: 1500, cacheWriteTokens: 0 });
  });

  it('caches are per model', () => {
    const cache = new CacheSim();
    cache.request(request('5m'), 0);
    expect(cache.request(request('5m', 'claude-haiku-5-5'), 10)).toMatchObject({ cacheWriteTokens: 1500 });
  });

  it('a day: 40 messages between 9:00 and 18:00; a quiet office pays more per message than a busy one', () => {
    const arrivals = officeArrivals(40, seeded(1));
    expect(arrivals).toHaveLength(40);
    expect(arrivals[0]!).toBeGreaterThanOrEqual(9 * 3600);
    expect(arrivals.at(-1)!).toBeLessThan(18 * 3600);
    const perMessage = (n: number) => {
      const times = officeArrivals(n, seeded(2));
      const day = simulateDay(
        times.map(() => ({ requests: [{ afterSeconds: 0, request: request('5m') }], messages: 1 })),
        times,
      );
      return (day.usd.prefixWrite + day.usd.prefixRead) / day.conversations;
    };
    expect(perMessage(40)).toBeGreaterThan(perMessage(150));
  });
});
