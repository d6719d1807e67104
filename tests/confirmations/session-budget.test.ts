import { Sessions, ERROR_RECOVERY_AT } from '../../src/confirmations/sessions';
import { END_FLOW_AT, SUGGEST_RESTART_AT, clarificationStep } from '../../src/turn/steps/after-thought';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { Clock, MIN, newKey, pendingInput } from './fixtures';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.close();
});

describe('clarification budget (R-S5)', () => {
  it('constants and steps follow the seed 001 loop policy (3 → suggest restart, 4 → end)', () => {
    expect(SUGGEST_RESTART_AT).toBe(3);
    expect(END_FLOW_AT).toBe(4);
    expect([0, 1, 2, 3, 4, 5].map(clarificationStep)).toEqual([
      'continue',
      'continue',
      'continue',
      'suggest_restart',
      'end_flow',
      'end_flow',
    ]);
  });

  it('bumpClarification counts rounds per session; resetClarification clears them', async () => {
    const m = new Sessions(tdb.db);
    const key = newKey();
    const other = newKey();
    const rounds = [];
    for (let i = 0; i < 4; i++) rounds.push(await m.bumpClarification(key));
    expect(rounds).toEqual([1, 2, 3, 4]);
    expect(rounds.map(clarificationStep)).toEqual(['continue', 'continue', 'suggest_restart', 'end_flow']);
    expect(await m.bumpClarification(other)).toBe(1);
    expect((await m.getSession(key)).clarificationRounds).toBe(4);
    await m.resetClarification(key);
    expect((await m.getSession(key)).clarificationRounds).toBe(0);
    expect(await m.bumpClarification(key)).toBe(1);
  });

  it('concurrent bumps are all counted', async () => {
    const m = new Sessions(tdb.db);
    const key = newKey();
    await m.bumpClarification(key);
    const got = await Promise.all(Array.from({ length: 6 }, () => m.bumpClarification(key)));
    expect([...got].sort()).toEqual([2, 3, 4, 5, 6, 7]);
  });

  it('an expired session starts counting again', async () => {
    const clock = new Clock();
    const m = new Sessions(tdb.db, { now: clock.now });
    const key = newKey();
    await m.bumpClarification(key);
    await m.bumpClarification(key);
    clock.advance(29 * MIN);
    expect(await m.bumpClarification(key)).toBe(3);
    clock.advance(30 * MIN + 1);
    expect(await m.bumpClarification(key)).toBe(1);
  });
});

describe('error recovery', () => {
  it('3 consecutive errors → ERROR_RECOVERY; a success → NORMAL with errors cleared', async () => {
    const m = new Sessions(tdb.db);
    const key = newKey();
    expect(ERROR_RECOVERY_AT).toBe(3);
    expect(await m.recordError(key, 'LLM_TIMEOUT')).toEqual({ errorCount: 1, mode: 'NORMAL' });
    expect(await m.recordError(key, 'LLM_TIMEOUT')).toEqual({ errorCount: 2, mode: 'NORMAL' });
    expect(await m.recordError(key, 'TOOL_FAILED')).toEqual({ errorCount: 3, mode: 'ERROR_RECOVERY' });
    expect(await m.getSession(key)).toMatchObject({ mode: 'ERROR_RECOVERY', errorCount: 3, lastError: 'TOOL_FAILED' });
    await m.recordSuccess(key, { lastIntent: 'create_task', lastTool: 'create_task' });
    expect(await m.getSession(key)).toMatchObject({
      mode: 'NORMAL',
      errorCount: 0,
      lastError: null,
      lastIntent: 'create_task',
      lastTool: 'create_task',
    });
    await m.recordSuccess(key);
    expect(await m.getSession(key)).toMatchObject({ lastIntent: 'create_task', lastTool: 'create_task' });
  });

  it('errors do not hide a pending confirmation; a success keeps it', async () => {
    const m = new Sessions(tdb.db);
    const key = newKey();
    const p = await m.pending.open(key, pendingInput());
    for (let i = 0; i < 3; i++) await m.recordError(key, 'E');
    expect(await m.getSession(key)).toMatchObject({ mode: 'CONFIRMATION_PENDING', errorCount: 3 });
    await m.recordSuccess(key, { lastIntent: 'x' });
    const s = await m.getSession(key);
    expect(s).toMatchObject({ mode: 'CONFIRMATION_PENDING', errorCount: 0 });
    expect(s.pending?.id).toBe(p.id);
  });

  it('database errors propagate (callers fail closed)', async () => {
    const { createDb } = await import('../../src/db/prisma');
    const broken = createDb({ url: 'postgresql://postgres@127.0.0.1:1/nope', connectionTimeoutMs: 500 });
    const m = new Sessions(broken);
    await expect(m.getSession(newKey())).rejects.toThrow();
    await expect(m.pending.approve({ pendingId: 'x', key: newKey() })).rejects.toThrow();
    await broken.$disconnect();
  });
});
