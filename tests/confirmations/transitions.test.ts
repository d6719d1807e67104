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

function manager(clock = new Clock()) {
  return { clock, m: new Sessions(tdb.db, { now: clock.now }) };
}

describe('Sessions: state transitions', () => {
  it('an unknown session is NORMAL with nothing pending (and is not created by a look)', async () => {
    const { m } = manager();
    const key = newKey();
    const s = await m.getSession(key);
    expect(s).toMatchObject({
      key,
      mode: 'NORMAL',
      pending: null,
      expiredPending: null,
      clarificationRounds: 0,
      errorCount: 0,
      expiresAt: null,
    });
    expect(await tdb.db.conversationState.count({ where: key })).toBe(0);
  });

  it('NORMAL → CONFIRMATION_PENDING → approved → executed → NORMAL', async () => {
    const { m, clock } = manager();
    const key = newKey();
    const p = await m.pending.open(key, pendingInput());
    expect(p).toMatchObject({
      status: 'pending',
      key,
      confirmationType: 'single',
      confirmationsGiven: 0,
      reasonCode: 'CONFIRM_EXTERNAL_EFFECT',
      orgId: 'org-1',
      memberId: 'member-1',
      turnId: 'turn-1',
    });
    expect(p.proposal).toMatchObject({
      toolName: 'create_task',
      parameters: { title: '資料作成' },
      summary: '田中さんに「資料作成」のタスクを作成',
    });
    expect(p.expiresAt.getTime() - clock.now().getTime()).toBe(10 * MIN);

    let s = await m.getSession(key);
    expect(s.mode).toBe('CONFIRMATION_PENDING');
    expect(s.pending?.id).toBe(p.id);
    expect(s.expiresAt!.getTime() - clock.now().getTime()).toBe(30 * MIN);

    clock.advance(MIN);
    const a = await m.pending.approve({ pendingId: p.id, key });
    expect(a.outcome).toBe('approved');
    expect(a.action).toMatchObject({ status: 'approved', confirmationsGiven: 1, decidedAt: clock.now() });
    s = await m.getSession(key);
    expect(s.pending).toBeNull();

    expect(await m.pending.markExecuted(p.id, { taskId: 't-9' })).toBe(true);
    expect(await m.pending.markExecuted(p.id, { taskId: 't-9' })).toBe(false);
    const row = await tdb.db.pendingAction.findUniqueOrThrow({ where: { id: p.id } });
    expect(row).toMatchObject({ status: 'executed', result: { taskId: 't-9' } });
    expect(row.executedAt).not.toBeNull();
    const st = await tdb.db.conversationState.findUniqueOrThrow({ where: { platform_roomId_accountId: key } });
    expect(st).toMatchObject({ mode: 'NORMAL', pendingActionId: null });
    s = await m.getSession(key);
    expect(s).toMatchObject({ mode: 'NORMAL', pending: null, expiredPending: null });
  });

  it('markExecuted refuses an action that was never approved', async () => {
    const { m } = manager();
    const key = newKey();
    const p = await m.pending.open(key, pendingInput());
    expect(await m.pending.markExecuted(p.id, {})).toBe(false);
    expect(await m.pending.markFailed(p.id, 'boom')).toBe(false);
    expect((await m.pending.find(p.id))?.status).toBe('pending');
  });

  it('approved → failed records the error and returns the session to NORMAL', async () => {
    const { m } = manager();
    const key = newKey();
    const p = await m.pending.open(key, pendingInput());
    await m.pending.approve({ pendingId: p.id, key });
    expect(await m.pending.markFailed(p.id, 'TOOL_TIMEOUT')).toBe(true);
    expect(await m.pending.markExecuted(p.id, {})).toBe(false);
    expect(await m.pending.find(p.id)).toMatchObject({ status: 'failed', result: { error: 'TOOL_TIMEOUT' } });
    expect(await m.getSession(key)).toMatchObject({ mode: 'NORMAL', pending: null, lastError: 'TOOL_TIMEOUT' });
  });

  it('deny: pending → cancelled, session NORMAL, later approval already_decided', async () => {
    const { m, clock } = manager();
    const key = newKey();
    const p = await m.pending.open(key, pendingInput());
    const d = await m.pending.deny({ pendingId: p.id, key });
    expect(d.outcome).toBe('denied');
    expect(d.action).toMatchObject({ status: 'cancelled', decidedAt: clock.now(), result: { cancelReason: 'denied' } });
    expect(await m.getSession(key)).toMatchObject({ mode: 'NORMAL', pending: null });
    expect((await m.pending.approve({ pendingId: p.id, key })).outcome).toBe('already_decided');
    expect((await m.pending.deny({ pendingId: p.id, key })).outcome).toBe('already_decided');
    expect(await m.pending.find(p.id)).toMatchObject({ status: 'cancelled', confirmationsGiven: 0 });
  });

  it('expiry: after 10 minutes getSession reports the expired action once and the session is NORMAL', async () => {
    const { m, clock } = manager();
    const key = newKey();
    const p = await m.pending.open(key, pendingInput());
    clock.advance(10 * MIN - 1);
    expect((await m.getSession(key)).pending?.id).toBe(p.id);
    clock.advance(1);
    const s = await m.getSession(key);
    expect(s).toMatchObject({ mode: 'NORMAL', pending: null });
    expect(s.expiredPending).toMatchObject({ id: p.id, status: 'expired', decidedAt: clock.now() });
    expect((await m.getSession(key)).expiredPending).toBeNull();
    expect((await m.pending.approve({ pendingId: p.id, key })).outcome).toBe('expired');
    expect((await m.pending.deny({ pendingId: p.id, key })).outcome).toBe('expired');
    expect(await m.pending.find(p.id)).toMatchObject({ status: 'expired', confirmationsGiven: 0 });
  });

  it('late approval (without a look first) → expired, nothing approved, session NORMAL', async () => {
    const { m, clock } = manager();
    const key = newKey();
    const p = await m.pending.open(key, pendingInput());
    clock.advance(11 * MIN);
    const a = await m.pending.approve({ pendingId: p.id, key });
    expect(a.outcome).toBe('expired');
    expect(a.action).toMatchObject({ id: p.id, status: 'expired' });
    expect(await m.pending.markExecuted(p.id, {})).toBe(false);
    const st = await tdb.db.conversationState.findUniqueOrThrow({ where: { platform_roomId_accountId: key } });
    expect(st).toMatchObject({ mode: 'NORMAL', pendingActionId: null });
  });

  it('an expired session resets to NORMAL with clarification rounds and errors cleared', async () => {
    const { m, clock } = manager();
    const key = newKey();
    await m.bumpClarification(key);
    await m.bumpClarification(key);
    await m.recordError(key, 'E1');
    const p = await m.pending.open(key, pendingInput());
    expect(await m.getSession(key)).toMatchObject({
      mode: 'CONFIRMATION_PENDING',
      clarificationRounds: 2,
      errorCount: 1,
    });
    clock.advance(31 * MIN);
    const s = await m.getSession(key);
    expect(s).toMatchObject({ mode: 'NORMAL', pending: null, clarificationRounds: 0, errorCount: 0, lastError: null });
    expect(s.expiredPending?.id).toBe(p.id);
    expect(await m.bumpClarification(key)).toBe(1);
  });

  it('a session with a longer-lived pending action still expires with the session', async () => {
    const clock = new Clock();
    const m = new Sessions(tdb.db, { now: clock.now, sessionTtlMs: 5 * MIN, pendingTtlMs: 60 * MIN });
    const key = newKey();
    const p = await m.pending.open(key, pendingInput());
    clock.advance(6 * MIN);
    const s = await m.getSession(key);
    expect(s).toMatchObject({ mode: 'NORMAL', pending: null });
    expect(s.expiredPending?.id).toBe(p.id);
    expect((await m.pending.approve({ pendingId: p.id, key })).outcome).toBe('expired');
  });

  it('a new pending action cancels the previous one', async () => {
    const { m } = manager();
    const key = newKey();
    const first = await m.pending.open(key, pendingInput());
    const second = await m.pending.open(key, pendingInput({ question: 'second?' }));
    expect(await m.pending.find(first.id)).toMatchObject({
      status: 'cancelled',
      result: { cancelReason: 'superseded', supersededBy: second.id },
    });
    expect((await m.getSession(key)).pending?.id).toBe(second.id);
    expect((await m.pending.approve({ pendingId: first.id, key })).outcome).toBe('already_decided');
    expect((await m.pending.approve({ pendingId: second.id, key })).outcome).toBe('approved');
    expect(await tdb.db.pendingAction.count({ where: { ...key, status: 'pending' } })).toBe(0);
  });

  it('a new question after 40 idle minutes: the old action expired (not superseded), the session afresh', async () => {
    const { m, clock } = manager();
    const key = newKey();
    await m.bumpClarification(key);
    await m.recordError(key, 'E1');
    const first = await m.pending.open(key, pendingInput());
    clock.advance(40 * MIN);
    // No look at the session in between: the new question itself finds both expired.
    const second = await m.pending.open(key, pendingInput({ question: 'second?' }));
    const old = await m.pending.find(first.id);
    expect(old).toMatchObject({ status: 'expired', result: null });
    expect(old!.decidedAt).toEqual(clock.now());
    expect(second).toMatchObject({ status: 'pending', question: 'second?', confirmationsGiven: 0 });
    expect(second.expiresAt).toEqual(new Date(clock.now().getTime() + 10 * MIN));
    expect(await m.getSession(key)).toMatchObject({
      mode: 'CONFIRMATION_PENDING',
      pending: { id: second.id },
      clarificationRounds: 0,
      errorCount: 0,
      lastError: null,
      expiresAt: new Date(clock.now().getTime() + 30 * MIN),
    });
  });

  it('a new question after the old one timed out (session still live): the old one expired, rounds kept', async () => {
    const clock = new Clock();
    const m = new Sessions(tdb.db, { now: clock.now, sessionTtlMs: 60 * MIN, pendingTtlMs: 5 * MIN });
    const key = newKey();
    await m.bumpClarification(key);
    const first = await m.pending.open(key, pendingInput());
    clock.advance(6 * MIN);
    const second = await m.pending.open(key, pendingInput({ question: 'again?' }));
    expect(await m.pending.find(first.id)).toMatchObject({ status: 'expired', result: null });
    expect(await m.getSession(key)).toMatchObject({ pending: { id: second.id }, clarificationRounds: 1 });
  });

  it('sessions are per (platform, room, account): another session is untouched', async () => {
    const { m } = manager();
    const key = newKey();
    const other = { ...key, accountId: `${key.accountId}-other` };
    const mine = await m.pending.open(key, pendingInput());
    const theirs = await m.pending.open(other, pendingInput());
    expect(await m.pending.find(mine.id)).toMatchObject({ status: 'pending' });
    expect((await m.getSession(key)).pending?.id).toBe(mine.id);
    expect((await m.getSession(other)).pending?.id).toBe(theirs.id);
  });

  it('cancelPending (urgent interruption) cancels the pending action with the reason', async () => {
    const { m } = manager();
    const key = newKey();
    expect(await m.pending.cancel(key, 'urgent')).toBeNull();
    const p = await m.pending.open(key, pendingInput());
    const c = await m.pending.cancel(key, 'urgent: ストップ');
    expect(c).toMatchObject({ id: p.id, status: 'cancelled', result: { cancelReason: 'urgent: ストップ' } });
    expect(await m.getSession(key)).toMatchObject({ mode: 'NORMAL', pending: null });
    expect((await m.pending.approve({ pendingId: p.id, key })).outcome).toBe('already_decided');
  });

  it('stores text with NUL characters (which PostgreSQL rejects) without them', async () => {
    const { m } = manager();
    const key = newKey();
    const p = await m.pending.open(
      key,
      pendingInput({
        originalMessage: 'a\u0000b',
        proposal: { id: 't', toolName: 'x', parameters: { s: 'c\u0000d' } },
      }),
    );
    expect(p.originalMessage).toBe('ab');
    expect(p.proposal.parameters).toEqual({ s: 'cd' });
    expect((await m.recordError(key, 'E\u0000')).errorCount).toBe(1);
  });

  it('unknown ids are not_found', async () => {
    const { m } = manager();
    const key = newKey();
    expect((await m.pending.approve({ pendingId: 'nope', key })).outcome).toBe('not_found');
    expect((await m.pending.deny({ pendingId: 'nope', key })).outcome).toBe('not_found');
    expect(await m.pending.find('nope')).toBeNull();
  });
});
