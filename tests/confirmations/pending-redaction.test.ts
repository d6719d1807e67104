import { purgeExpired } from '../../src/app/retention';
import { Sessions } from '../../src/confirmations/sessions';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { Clock, MIN, newKey, pendingInput } from './fixtures';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.close();
});

/** A confirmation whose texts carry PII typed the Japanese way (issue 8, R-O2). */
const withPii = () =>
  pendingInput({
    originalMessage: '佐藤さん（０９０－１２３４－５６７８）に連絡するタスクを作って',
    question: '佐藤さん（０９０－１２３４－５６７８）に連絡するタスクを作成します。実行してよいですか？',
    reasoning: 'The person wants a task to call 090-1234-5678 and mail sato＠example.jp.',
    proposal: {
      id: 'toolu_9',
      toolName: 'create_task',
      summary: '０９０－１２３４－５６７８に電話するタスク',
      parameters: { assignee: '佐藤', title: '０９０－１２３４－５６７８ と sato＠example.jp に連絡' },
    },
  });

const RAW = ['０９０－１２３４－５６７８', '090-1234-5678', 'sato＠example.jp'];

async function rowText(id: string): Promise<string> {
  const row = await tdb.db.pendingAction.findUniqueOrThrow({ where: { id } });
  return JSON.stringify({
    p: row.proposal,
    m: row.originalMessage,
    q: row.question,
    r: row.reasoning,
    x: row.result,
    c: row.redactedCopy,
  });
}

function expectNoRawPii(text: string): void {
  for (const raw of RAW) expect(text).not.toContain(raw);
  expect(text).toContain('[PHONE]');
}

describe('pending actions keep no raw PII once decided (issue 8)', () => {
  it('keeps the raw parameters while pending and approved (they are needed to run), redacts on execution', async () => {
    const clock = new Clock();
    const m = new Sessions(tdb.db, { now: clock.now });
    const key = newKey();
    const p = await m.pending.open(key, withPii());
    expect((await m.getSession(key)).pending!.proposal.parameters).toEqual(withPii().proposal.parameters);
    await m.pending.approve({ pendingId: p.id, key });
    expect((await m.pending.find(p.id))!.proposal.parameters).toEqual(withPii().proposal.parameters);
    await m.pending.markExecuted(p.id, {
      taskId: 't1',
      title: '０９０－１２３４－５６７８ と sato＠example.jp に連絡',
    });
    const text = await rowText(p.id);
    expectNoRawPii(text);
    const row = await tdb.db.pendingAction.findUniqueOrThrow({ where: { id: p.id } });
    expect(row).toMatchObject({ status: 'executed', redactedCopy: null });
    expect(row.redactedAt).not.toBeNull();
    expect(row.proposal).toMatchObject({
      toolName: 'create_task',
      parameters: { assignee: '佐藤', title: '[PHONE] と [EMAIL] に連絡' },
    });
  });

  it.each([
    [
      'denied',
      async (m: Sessions, id: string, key: ReturnType<typeof newKey>) => {
        await m.pending.deny({ pendingId: id, key });
      },
    ],
    [
      'cancelled by an urgent request',
      async (m: Sessions, _id: string, key: ReturnType<typeof newKey>) => {
        await m.pending.cancel(key, 'urgent');
      },
    ],
    [
      'superseded by a new confirmation',
      async (m: Sessions, _id: string, key: ReturnType<typeof newKey>) => {
        await m.pending.open(key, pendingInput());
      },
    ],
    [
      'failed at execution',
      async (m: Sessions, id: string, key: ReturnType<typeof newKey>) => {
        await m.pending.approve({ pendingId: id, key });
        await m.pending.markFailed(id, 'denied at execution');
      },
    ],
  ])('redacts when %s', async (_name, decide) => {
    const m = new Sessions(tdb.db, { now: new Clock().now });
    const key = newKey();
    const p = await m.pending.open(key, withPii());
    expect(await rowText(p.id)).toContain('０９０－１２３４－５６７８');
    await decide(m, p.id, key);
    expectNoRawPii(await rowText(p.id));
  });

  it('redacts when the confirmation expires (a late look at the session)', async () => {
    const clock = new Clock();
    const m = new Sessions(tdb.db, { now: clock.now });
    const key = newKey();
    const p = await m.pending.open(key, withPii());
    clock.advance(11 * MIN);
    expect((await m.getSession(key)).expiredPending?.id).toBe(p.id);
    expectNoRawPii(await rowText(p.id));
  });

  it(
    'the retention job settles forgotten actions (redacting ' + 'them) and deletes decided ones past retention',
    async () => {
      const clock = new Clock('2026-01-01T00:00:00Z');
      const m = new Sessions(tdb.db, { now: clock.now });
      const forgotten = await m.pending.open(newKey(), withPii());
      const keyOld = newKey();
      const old = await m.pending.open(keyOld, pendingInput());
      await m.pending.deny({ pendingId: old.id, key: keyOld });
      const fresh = await new Sessions(tdb.db).pending.open(newKey(), withPii());
      await tdb.db.$executeRaw`UPDATE pending_actions SET "createdAt" = now() - interval '60 days'
      WHERE id IN (${old.id}, ${forgotten.id})`;

      const res = await purgeExpired(tdb.db, { auditDays: 365, historyDays: 30 }, new Date());
      expect(res.pendingSettled).toBeGreaterThanOrEqual(1);
      expect(res.pendingActions).toBeGreaterThanOrEqual(2);
      expect(await tdb.db.pendingAction.findUnique({ where: { id: old.id } })).toBeNull();
      expect(await tdb.db.pendingAction.findUnique({ where: { id: forgotten.id } })).toBeNull();
      // A current confirmation is untouched.
      expect(await tdb.db.pendingAction.findUniqueOrThrow({ where: { id: fresh.id } })).toMatchObject({
        status: 'pending',
      });
    },
  );

  it('settling a forgotten action redacts it even before it is old enough to delete', async () => {
    const clock = new Clock(new Date(Date.now() - 2 * 86_400_000).toISOString());
    const m = new Sessions(tdb.db, { now: clock.now });
    const p = await m.pending.open(newKey(), withPii());
    await purgeExpired(tdb.db, { auditDays: 365, historyDays: 30 }, new Date());
    expect(await tdb.db.pendingAction.findUniqueOrThrow({ where: { id: p.id } })).toMatchObject({ status: 'expired' });
    expectNoRawPii(await rowText(p.id));
  });

  it('a row written without a redacted copy loses its parameters and texts when decided (fail-closed)', async () => {
    const key = newKey();
    const m = new Sessions(tdb.db);
    const p = await m.pending.open(key, withPii());
    await tdb.db.$executeRaw`UPDATE pending_actions SET "redactedCopy" = NULL WHERE id = ${p.id}`;
    await m.pending.deny({ pendingId: p.id, key });
    const row = await tdb.db.pendingAction.findUniqueOrThrow({ where: { id: p.id } });
    expect(row.proposal).toEqual({ id: 'toolu_9', toolName: 'create_task', parameters: {} });
    expect([row.originalMessage, row.question, row.reasoning]).toEqual(['', '', '']);
  });
});
