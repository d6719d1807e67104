import { OrgCache, refreshEvery } from '../../src/org/org-cache';

/**
 * A per-organisation value is read again in the background before its bound for a missed notification, so that
 * no message waits for that read (a quiet organisation's next message had read its whole directory on its way to
 * the model); an import's invalidation is never overwritten by a value read before it.
 */
describe('OrgCache: the background refresh', () => {
  let now = 1_000_000;
  const clock = () => now;
  const loader = () => {
    const calls: string[] = [];
    let version = 1;
    let fail = false;
    let hold: Promise<void> | null = null;
    const load = async (orgId: string) => {
      calls.push(orgId);
      const v = version;
      if (hold) await hold;
      if (fail) throw new Error('connection refused');
      return `${orgId}@${v}`;
    };
    return {
      calls,
      load,
      next: () => version++,
      failing: (f: boolean) => (fail = f),
      holding: (p: Promise<void> | null) => (hold = p),
    };
  };

  it('reads a value again once half its bound old; the next get answers from memory, with the new value', async () => {
    const l = loader();
    const cache = new OrgCache(l.load, 60_000, clock);
    expect(await cache.get('acme')).toBe('acme@1');
    now += 20_000;
    await cache.refresh();
    expect(l.calls).toHaveLength(1);
    now += 15_000;
    l.next();
    await cache.refresh();
    expect(l.calls).toHaveLength(2);
    // 61 s after the first read, and nothing is read on the way: the refresh's value is 26 s old.
    now += 26_000;
    expect(await cache.get('acme')).toBe('acme@2');
    expect(l.calls).toHaveLength(2);
  });

  it('an invalidation while a refresh reads wins: the value read before the import is not kept', async () => {
    const l = loader();
    const cache = new OrgCache(l.load, 60_000, clock);
    await cache.get('acme');
    now += 31_000;
    let release!: () => void;
    l.holding(new Promise<void>((r) => (release = r)));
    const refreshing = cache.refresh();
    cache.invalidate('acme'); // an import's NOTIFY, while the refresh's read is on its way
    l.next();
    release();
    await refreshing;
    l.holding(null);
    expect(await cache.get('acme')).toBe('acme@2');
    expect(l.calls).toHaveLength(3);
  });

  it('a refresh that fails drops the value: the next get reads, and its caller sees the failure', async () => {
    const l = loader();
    const cache = new OrgCache(l.load, 60_000, clock);
    await cache.get('acme');
    now += 31_000;
    l.failing(true);
    await cache.refresh();
    await expect(cache.get('acme')).rejects.toThrow('connection refused');
    l.failing(false);
    expect(await cache.get('acme')).toBe('acme@1');
  });

  it('refreshEvery runs one refresh at a time on a timer that keeps no process alive, until stopped', async () => {
    jest.useFakeTimers();
    try {
      let runs = 0;
      let release!: () => void;
      const stop = refreshEvery(
        () =>
          new Promise<void>((r) => {
            runs++;
            release = r;
          }),
        1_000,
      );
      jest.advanceTimersByTime(3_500);
      expect(runs).toBe(1); // the first run has not finished: no second one beside it
      release();
      await Promise.resolve();
      await Promise.resolve();
      jest.advanceTimersByTime(1_000);
      expect(runs).toBe(2);
      stop();
      release();
      jest.advanceTimersByTime(5_000);
      expect(runs).toBe(2);
    } finally {
      jest.useRealTimers();
    }
  });
});
