import { sqlRunner } from '../../src/db/sql';
import { importDirectoryFile } from '../../src/org/import-directory';
import { loadAllRooms, RoomIndex } from '../../src/org/room-index';
import { SAMPLE_DIRECTORY } from '../../src/service';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

describe('RoomIndex: the intake room lookup without a statement per webhook', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await importDirectoryFile(t.db, SAMPLE_DIRECTORY);
  });
  afterAll(() => t.close());

  /** The real loader over the test database, counting its statements. */
  const counted = () => {
    const sql = sqlRunner(t.db);
    const calls = { n: 0 };
    const load = () => {
      calls.n++;
      return loadAllRooms(sql);
    };
    return { calls, load };
  };

  it('answers directory rooms with their organisation and authority, and unknown rooms with null', async () => {
    const { calls, load } = counted();
    const index = new RoomIndex(load);
    expect(await index.get('chatwork', '5001')).toEqual({ orgId: 'acme', authority: 'member' });
    expect(await index.get('discord', '1122334455667788')).toEqual({ orgId: 'acme', authority: 'public' });
    // A guest room, an outside contact's DM: not in the directory, known without another statement.
    expect(await index.get('chatwork', '424242')).toBeNull();
    // The same external id on another platform is another room.
    expect(await index.get('discord', '5001')).toBeNull();
    expect(calls.n).toBe(1);
  });

  it('warmed at start-up, the first lookup needs no statement; a failed warm-up is left to the lookups', async () => {
    const { calls, load } = counted();
    const index = new RoomIndex(load);
    await index.warm();
    expect(calls.n).toBe(1);
    expect((await index.get('chatwork', '5001'))?.orgId).toBe('acme');
    expect(calls.n).toBe(1);
    let down = true;
    const cold = new RoomIndex(() => (down ? Promise.reject(new Error('connection refused')) : load()));
    await expect(cold.warm()).resolves.toBeUndefined();
    down = false;
    expect((await cold.get('chatwork', '5001'))?.orgId).toBe('acme');
  });

  it('a burst of lookups for rooms it has not seen costs one statement', async () => {
    const { calls, load } = counted();
    const index = new RoomIndex(load);
    const answers = await Promise.all(
      Array.from({ length: 250 }, (_, i) => index.get('chatwork', i === 0 ? '5001' : String(30000 + i))),
    );
    expect(answers[0]?.orgId).toBe('acme');
    expect(answers.slice(1).every((a) => a === null)).toBe(true);
    expect(calls.n).toBe(1);
  });

  it('invalidated (an import was notified), it reads the rooms again: a room added since is known', async () => {
    const { calls, load } = counted();
    const index = new RoomIndex(load);
    expect(await index.get('chatwork', '7777')).toBeNull();
    await t.db.room.create({ data: { platform: 'chatwork', externalId: '7777', orgId: 'acme', authority: 'member' } });
    // Until the import's notification arrives, the index answers from what it read.
    expect(await index.get('chatwork', '7777')).toBeNull();
    index.invalidate();
    expect(await index.get('chatwork', '7777')).toEqual({ orgId: 'acme', authority: 'member' });
    expect(calls.n).toBe(2);
    await t.db.room.delete({ where: { platform_externalId: { platform: 'chatwork', externalId: '7777' } } });
  });

  it('a failed read is not kept: the lookup fails (the webhook answers 503) and the next one reads again', async () => {
    let fail = true;
    const { calls, load } = counted();
    const index = new RoomIndex(() => (fail ? Promise.reject(new Error('connection refused')) : load()));
    await expect(index.get('chatwork', '5001')).rejects.toThrow('connection refused');
    fail = false;
    expect((await index.get('chatwork', '5001'))?.orgId).toBe('acme');
    expect(calls.n).toBe(1);
  });

  it('reads again after maxAgeMs (a missed notification is bounded), not before', async () => {
    let now = 1_000_000;
    const { calls, load } = counted();
    const index = new RoomIndex(load, 60_000, () => now);
    await index.get('chatwork', '5001');
    now += 59_000;
    await index.get('chatwork', '5001');
    expect(calls.n).toBe(1);
    now += 2_000;
    await index.get('chatwork', '5001');
    expect(calls.n).toBe(2);
  });

  it('reads the rooms again in the background at half its bound, so no lookup waits for that read', async () => {
    let now = 1_000_000;
    const { calls, load } = counted();
    const index = new RoomIndex(load, 60_000, () => now);
    await index.get('chatwork', '5001');
    now += 20_000;
    await index.refresh();
    expect(calls.n).toBe(1);
    now += 15_000;
    await index.refresh();
    expect(calls.n).toBe(2);
    now += 30_000; // 65 s after the first read, 30 s after the refresh's
    expect((await index.get('chatwork', '5001'))?.orgId).toBe('acme');
    expect(calls.n).toBe(2);
  });

  it('a refresh that fails drops the index (the next lookup reads, fails closed); an invalidation wins', async () => {
    let now = 1_000_000;
    let fail = false;
    const { calls, load } = counted();
    const index = new RoomIndex(
      () => (fail ? Promise.reject(new Error('connection refused')) : load()),
      60_000,
      () => now,
    );
    await index.get('chatwork', '5001');
    now += 31_000;
    fail = true;
    await index.refresh();
    await expect(index.get('chatwork', '5001')).rejects.toThrow('connection refused');
    fail = false;
    await index.get('chatwork', '5001');
    const before = calls.n;
    now += 31_000;
    const refreshing = index.refresh();
    index.invalidate();
    await refreshing;
    await index.get('chatwork', '5001');
    // The refresh's read was dropped: the lookup after the invalidation read again.
    expect(calls.n).toBe(before + 2);
  });
});
