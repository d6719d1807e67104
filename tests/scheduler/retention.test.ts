import { purgeExpired } from '../../src/scheduler/retention';
import { claimFireKey } from '../../src/scheduler/run-once';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

describe('retention purge (R-O2)', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.close();
  });

  it('deletes audit and history rows past their days, keeps newer rows and unfinished work', async () => {
    const now = new Date('2026-11-22T00:00:00Z');
    const old = new Date('2026-01-01T00:00:00Z');
    const recent = new Date('2026-11-20T00:00:00Z');
    const turn = (id: string, createdAt: Date) => ({
      id,
      platform: 'console',
      roomId: 'r',
      accountId: 'a',
      decision: 'REPLY',
      reasonCode: 'B',
      finalDecider: 'LLM',
      totalMs: 1,
      createdAt,
    });
    await t.db.turnRecord.createMany({ data: [turn('old', old), turn('new', recent)] });
    const msg = (text: string, createdAt: Date) => ({
      orgId: 'o',
      platform: 'console',
      roomId: 'r',
      accountId: 'a',
      role: 'user',
      text,
      sentAt: createdAt,
      createdAt,
    });
    await t.db.conversationMessage.createMany({ data: [msg('古い', old), msg('新しい', recent)] });
    await t.db.workItem.createMany({
      data: [
        { type: 'work', payload: {}, orderingKey: 'k', dedupeKey: 'done-old', state: 'done', updatedAt: old },
        { type: 'work', payload: {}, orderingKey: 'k', dedupeKey: 'queued-old', state: 'queued', updatedAt: old },
      ],
    });
    const res = await purgeExpired(t.db, { auditDays: 180, historyDays: 90 }, now);
    expect(res).toMatchObject({ turnRecords: 1, conversationMessages: 1, workItems: 1 });
    expect((await t.db.turnRecord.findMany()).map((r) => r.id)).toEqual(['new']);
    expect((await t.db.conversationMessage.findMany()).map((r) => r.text)).toEqual(['新しい']);
    expect((await t.db.workItem.findMany()).map((r) => r.dedupeKey)).toEqual(['queued-old']);
  });

  it('a scheduled run fires once across instances (fire key)', async () => {
    const results = await Promise.all(
      Array.from({ length: 5 }, () => claimFireKey(t.db, 'system:retention', 'system:retention:2026-11-22')),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });
});
