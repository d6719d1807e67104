import { Pool } from 'pg';
import type { ChatSender, OutboundReply, SendResult } from '../../src/core/chat';
import { WorkQueue } from '../../src/queue/work-queue';
import { Outbox } from '../../src/queue/outbox';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

/**
 * Whatever a platform sees must be preceded by a durable commit of the turn's writes (the claim, the reply's row),
 * and no statement may leave a changed commit setting behind on a pooled connection. (The claim and a turn's first
 * statement once committed without waiting for the flush; the bench showed no gain and that was removed.)
 */
describe('commits that do not wait for the flush', () => {
  let t: TestDatabase;
  let pool: Pool;
  let n = 0;

  beforeAll(async () => {
    t = await createTestDatabase();
    // One connection: the claim, the take and the checks below share it, as a pooled connection is shared.
    pool = new Pool({ connectionString: t.url, max: 1 });
  });
  afterAll(async () => {
    await pool.end();
    await t.close();
  });

  const lsn = async (fn: 'insert' | 'flush'): Promise<string> =>
    (await t.db.$queryRawUnsafe<{ l: string }[]>(`SELECT pg_current_wal_${fn}_lsn()::text AS l`))[0]!.l;
  const atLeast = async (a: string, b: string): Promise<boolean> =>
    (await t.db.$queryRawUnsafe<{ ok: boolean }[]>(`SELECT $1::pg_lsn >= $2::pg_lsn AS ok`, a, b))[0]!.ok;

  it('the claim is durable by the time its reply reaches the platform; the setting does not leak', async () => {
    const queue = new WorkQueue(t.db, { instanceId: 'flush', claimTtlMs: 60_000, defaultMaxAttempts: 3, pool });
    const outbox = new Outbox(t.db, { pool });
    let writtenBefore = '';
    const durableAtPost: boolean[] = [];
    const sender: ChatSender = {
      platform: 'console',
      async send(_reply: OutboundReply): Promise<SendResult> {
        // What the platform sees now must survive a database crash, and so must everything the turn wrote before.
        durableAtPost.push(await atLeast(await lsn('flush'), writtenBefore));
        return { platformMessageId: `m${n}` };
      },
    };
    outbox.register(sender);

    for (let i = 0; i < 5; i++) {
      n += 1;
      await queue.enqueue({ type: 'user_request', payload: { n }, orderingKey: `c${n}`, dedupeKey: `d${n}` });
      await outbox.reserve(`reply-${n}`, { platform: 'console', roomId: 'r1' });
      const item = await queue.claim();
      expect(item).not.toBeNull();
      // The claim's own session goes back to synchronous commits for its next statement.
      expect((await pool.query<{ s: string }>("SELECT current_setting('synchronous_commit') AS s")).rows[0]!.s).toBe(
        'on',
      );
      // Everything written so far, the claim included.
      writtenBefore = await lsn('insert');
      const res = await outbox.deliver(`reply-${n}`, { platform: 'console', roomId: 'r1', text: 'はい' }, item!);
      expect(res.platformMessageId).toBe(`m${n}`);
    }
    expect(durableAtPost).toEqual([true, true, true, true, true]);
  });
});
