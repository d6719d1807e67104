import { purgeExpired } from '../../src/app/retention';
import { claimFireKey } from '../../src/scheduler/schedule-store';
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

  it('purges a conversation summary with the messages it covers; a summary of recent messages stays', async () => {
    const now = new Date('2026-11-22T00:00:00Z');
    const old = new Date('2026-07-01T00:00:00Z');
    const recent = new Date('2026-11-21T00:00:00Z');
    const msg = (roomId: string, text: string, createdAt: Date) => ({
      orgId: 'o',
      platform: 'console',
      roomId,
      accountId: 'a',
      role: 'user',
      text,
      sentAt: createdAt,
      createdAt,
    });
    // Room s-old: the summary covers a message past retention (and one recent one). Room s-new: only recent ones.
    await t.db.conversationMessage.createMany({
      data: [msg('s-old', '古い相談', old), msg('s-old', '最近の相談', recent), msg('s-new', '最近', recent)],
    });
    const last = async (roomId: string) =>
      (await t.db.conversationMessage.findFirstOrThrow({ where: { roomId }, orderBy: { id: 'desc' } })).id;
    await t.db.conversationSummary.createMany({
      data: [
        {
          platform: 'console',
          roomId: 's-old',
          accountId: 'a',
          summary: '古い相談の要約',
          coversUpToId: await last('s-old'),
        },
        {
          platform: 'console',
          roomId: 's-new',
          accountId: 'a',
          summary: '最近の要約',
          coversUpToId: await last('s-new'),
        },
      ],
    });
    const res = await purgeExpired(t.db, { auditDays: 180, historyDays: 90 }, now);
    expect(res).toMatchObject({ conversationSummaries: 1, conversationMessages: 1 });
    expect((await t.db.conversationSummary.findMany()).map((s) => s.roomId)).toEqual(['s-new']);
    expect((await t.db.conversationMessage.findMany({ where: { roomId: 's-old' } })).map((m) => m.text)).toEqual([
      '最近の相談',
    ]);
  });

  it('a scheduled run fires once across instances (fire key)', async () => {
    const results = await Promise.all(
      Array.from({ length: 5 }, () => claimFireKey(t.db, 'system:retention', 'system:retention:2026-11-22')),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });
});
