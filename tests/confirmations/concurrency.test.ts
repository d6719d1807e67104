import { Sessions } from '../../src/confirmations/sessions';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { newKey, pendingInput } from './fixtures';

let tdb: TestDatabase;
let m: Sessions;
beforeAll(async () => {
  tdb = await createTestDatabase();
  m = new Sessions(tdb.db);
});
afterAll(async () => {
  await tdb.close();
});

const count = (outcomes: string[], o: string) => outcomes.filter((x) => x === o).length;

describe('Sessions: at most once under concurrency (R-S3)', () => {
  it('20 concurrent approvals of one single-confirmation action → exactly one approved', async () => {
    const key = newKey();
    const p = await m.pending.open(key, pendingInput());
    const results = await Promise.all(Array.from({ length: 20 }, () => m.pending.approve({ pendingId: p.id, key })));
    const outcomes = results.map((r) => r.outcome);
    expect(count(outcomes, 'approved')).toBe(1);
    expect(count(outcomes, 'already_decided')).toBe(19);
    const row = await tdb.db.pendingAction.findUniqueOrThrow({ where: { id: p.id } });
    expect(row).toMatchObject({ status: 'approved', confirmationsGiven: 1 });
    expect(row.decidedAt).not.toBeNull();

    const executed = await Promise.all(Array.from({ length: 5 }, () => m.pending.markExecuted(p.id, { ok: true })));
    expect(executed.filter(Boolean)).toHaveLength(1);
    expect(await tdb.db.pendingAction.count({ where: { ...key, status: 'executed' } })).toBe(1);
  });

  it('concurrent approvals and denials: exactly one decision wins', async () => {
    const key = newKey();
    const p = await m.pending.open(key, pendingInput());
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0 ? m.pending.approve({ pendingId: p.id, key }) : m.pending.deny({ pendingId: p.id, key }),
      ),
    );
    const outcomes = results.map((r) => r.outcome);
    expect(count(outcomes, 'approved') + count(outcomes, 'denied')).toBe(1);
    expect(count(outcomes, 'already_decided')).toBe(19);
    const row = await tdb.db.pendingAction.findUniqueOrThrow({ where: { id: p.id } });
    expect(['approved', 'cancelled']).toContain(row.status);
    expect(row.confirmationsGiven).toBe(count(outcomes, 'approved'));
  });

  it('double confirmation: first → needs_second (still pending), second → approved', async () => {
    const key = newKey();
    const p = await m.pending.open(key, pendingInput({ confirmationType: 'double', reasonCode: 'CONFIRM_HIGH_RISK' }));
    const first = await m.pending.approve({ pendingId: p.id, key });
    expect(first.outcome).toBe('needs_second');
    expect(first.action).toMatchObject({ status: 'pending', confirmationsGiven: 1, decidedAt: null });
    expect((await m.getSession(key)).pending).toMatchObject({ id: p.id, confirmationsGiven: 1 });
    expect(await m.pending.markExecuted(p.id, {})).toBe(false);

    const second = await m.pending.approve({ pendingId: p.id, key });
    expect(second.outcome).toBe('approved');
    expect(second.action).toMatchObject({ status: 'approved', confirmationsGiven: 2 });
    expect((await m.pending.approve({ pendingId: p.id, key })).outcome).toBe('already_decided');
  });

  it('double confirmation: a denial at the second question cancels', async () => {
    const key = newKey();
    const p = await m.pending.open(key, pendingInput({ confirmationType: 'double' }));
    expect((await m.pending.approve({ pendingId: p.id, key })).outcome).toBe('needs_second');
    expect((await m.pending.deny({ pendingId: p.id, key })).outcome).toBe('denied');
    expect(await m.pending.find(p.id)).toMatchObject({ status: 'cancelled', confirmationsGiven: 1 });
  });

  it('double confirmation: 20 concurrent second approvals → exactly one approved', async () => {
    const key = newKey();
    const p = await m.pending.open(key, pendingInput({ confirmationType: 'double' }));
    expect((await m.pending.approve({ pendingId: p.id, key })).outcome).toBe('needs_second');
    const results = await Promise.all(Array.from({ length: 20 }, () => m.pending.approve({ pendingId: p.id, key })));
    const outcomes = results.map((r) => r.outcome);
    expect(count(outcomes, 'approved')).toBe(1);
    expect(count(outcomes, 'already_decided')).toBe(19);
    expect(await m.pending.find(p.id)).toMatchObject({ status: 'approved', confirmationsGiven: 2 });
  });

  it('double confirmation: 20 concurrent first approvals never approve more than once or count past 2', async () => {
    const key = newKey();
    const p = await m.pending.open(key, pendingInput({ confirmationType: 'double' }));
    const results = await Promise.all(Array.from({ length: 20 }, () => m.pending.approve({ pendingId: p.id, key })));
    const outcomes = results.map((r) => r.outcome);
    expect(count(outcomes, 'approved')).toBeLessThanOrEqual(1);
    expect(count(outcomes, 'needs_second')).toBeGreaterThanOrEqual(1);
    const row = await tdb.db.pendingAction.findUniqueOrThrow({ where: { id: p.id } });
    expect(row.confirmationsGiven).toBe(1 + count(outcomes, 'approved'));
    expect(row.status).toBe(count(outcomes, 'approved') === 1 ? 'approved' : 'pending');
  });

  it('double confirmation with expectedConfirmations: duplicated first answers never count as the second', async () => {
    const key = newKey();
    const p = await m.pending.open(key, pendingInput({ confirmationType: 'double' }));
    const results = await Promise.all(
      Array.from({ length: 20 }, () => m.pending.approve({ pendingId: p.id, key, expectedConfirmations: 0 })),
    );
    expect(results.every((r) => r.outcome === 'needs_second')).toBe(true);
    expect(await m.pending.find(p.id)).toMatchObject({ status: 'pending', confirmationsGiven: 1 });
    const second = await Promise.all(
      Array.from({ length: 10 }, () => m.pending.approve({ pendingId: p.id, key, expectedConfirmations: 1 })),
    );
    expect(
      count(
        second.map((r) => r.outcome),
        'approved',
      ),
    ).toBe(1);
    expect(await m.pending.find(p.id)).toMatchObject({ status: 'approved', confirmationsGiven: 2 });
  });

  it('concurrent opens for one session leaves exactly one pending action', async () => {
    const key = newKey();
    const created = await Promise.all(
      Array.from({ length: 8 }, (_, i) => m.pending.open(key, pendingInput({ question: `q${i}` }))),
    );
    expect(await tdb.db.pendingAction.count({ where: { ...key, status: 'pending' } })).toBe(1);
    expect(await tdb.db.pendingAction.count({ where: { ...key, status: 'cancelled' } })).toBe(7);
    const s = await m.getSession(key);
    expect(created.map((c) => c.id)).toContain(s.pending?.id);
    expect((await tdb.db.pendingAction.findFirstOrThrow({ where: { ...key, status: 'pending' } })).id).toBe(
      s.pending?.id,
    );
  });
});

describe('Sessions: only the asker decides', () => {
  it('another account in the same room → not_yours and nothing changes', async () => {
    const key = newKey();
    const p = await m.pending.open(key, pendingInput());
    const stranger = { ...key, accountId: 'acc-stranger' };
    for (const r of [
      await m.pending.approve({ pendingId: p.id, key: stranger }),
      await m.pending.deny({ pendingId: p.id, key: stranger }),
    ]) {
      expect(r.outcome).toBe('not_yours');
      expect(r.action).toBeUndefined();
    }
    expect(await m.pending.find(p.id)).toMatchObject({ status: 'pending', confirmationsGiven: 0, decidedAt: null });
    expect((await m.getSession(key)).pending?.id).toBe(p.id);
  });

  it('the same account in a different room (or platform) → not_yours', async () => {
    const key = newKey();
    const p = await m.pending.open(key, pendingInput());
    expect((await m.pending.approve({ pendingId: p.id, key: { ...key, roomId: 'another-room' } })).outcome).toBe(
      'not_yours',
    );
    expect((await m.pending.approve({ pendingId: p.id, key: { ...key, platform: 'discord' } })).outcome).toBe(
      'not_yours',
    );
    expect(await m.pending.find(p.id)).toMatchObject({ status: 'pending', confirmationsGiven: 0 });
    expect((await m.pending.approve({ pendingId: p.id, key })).outcome).toBe('approved');
  });

  it('strangers racing the asker cannot win', async () => {
    const key = newKey();
    const p = await m.pending.open(key, pendingInput());
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        m.pending.approve({ pendingId: p.id, key: i === 5 ? key : { ...key, accountId: `x${i}` } }),
      ),
    );
    expect(results.map((r) => r.outcome)).toEqual(
      Array.from({ length: 10 }, (_, i) => (i === 5 ? 'approved' : 'not_yours')),
    );
  });
});
