import { RoomMembersCache } from '../../src/context/room-members';
import type { RoomMember } from '../../src/context/types';
import { captureLogger } from '../helpers/logs';

describe('RoomMembersCache (issue 12 §3)', () => {
  const yamamoto: RoomMember = { accountId: '2001', name: '山本 花子' };
  const lee: RoomMember = { accountId: '2002', name: 'Lee Min' };

  it('reads a room once per TTL (concurrent turns share the read), then again', async () => {
    let now = 0;
    const reads: string[] = [];
    const cache = new RoomMembersCache({
      ttlMs: 60_000,
      logger: captureLogger().logger,
      now: () => now,
      list: async (roomId) => {
        reads.push(roomId);
        return reads.length === 1 ? [yamamoto] : [yamamoto, lee];
      },
    });
    const [a, b] = await Promise.all([cache.forRoom('5001'), cache.forRoom('5001')]);
    expect(a).toEqual([yamamoto]);
    expect(b).toEqual([yamamoto]);
    now = 59_000;
    expect(await cache.forRoom('5001')).toEqual([yamamoto]);
    expect(reads).toEqual(['5001']);
    now = 61_000;
    expect(await cache.forRoom('5001')).toEqual([yamamoto, lee]);
    expect(reads).toEqual(['5001', '5001']);
  });

  it('a failing or slow API degrades to the last list (or none), logged without secrets', async () => {
    let now = 0;
    let mode: 'ok' | 'fail' | 'hang' = 'ok';
    let reads = 0;
    const { logger, lines } = captureLogger();
    const cache = new RoomMembersCache({
      ttlMs: 1000,
      failureTtlMs: 5000,
      waitMs: 50,
      logger,
      now: () => now,
      list: async () => {
        reads++;
        if (mode === 'fail')
          throw Object.assign(new Error('GET /rooms/5001/members returned 500 (X-ChatWorkToken cw-secret)'), {
            code: 'EXTERNAL_API_FAILED',
          });
        if (mode === 'hang') return new Promise<RoomMember[]>(() => undefined);
        return [yamamoto];
      },
    });
    mode = 'fail';
    expect(await cache.forRoom('5009')).toEqual([]);
    mode = 'ok';
    expect(await cache.forRoom('5001')).toEqual([yamamoto]);
    now = 2000;
    mode = 'fail';
    expect(await cache.forRoom('5001')).toEqual([yamamoto]);
    expect(await cache.forRoom('5009')).toEqual([]);
    expect(reads).toBe(3);
    const logged = JSON.stringify(lines);
    expect(logged).toContain('EXTERNAL_API_FAILED');
    expect(logged).not.toContain('cw-secret');
    // A hanging API: the turn waits at most waitMs and gets the last list.
    now = 8000;
    mode = 'hang';
    const t0 = Date.now();
    expect(await cache.forRoom('5001')).toEqual([yamamoto]);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('TTL 0 never reads', async () => {
    const list = jest.fn(async () => [yamamoto]);
    const cache = new RoomMembersCache({ ttlMs: 0, logger: captureLogger().logger, list });
    expect(await cache.forRoom('5001')).toEqual([]);
    expect(list).not.toHaveBeenCalled();
  });
});
