import { announce } from '../../handlers/announcements';
import type { Db } from '../../src/db/prisma';
import { ToolExecutor } from '../../src/tools/executor';
import { ToolRegistry } from '../../src/tools/registry';
import type { ToolServices } from '../../src/tools/types';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { seedSample, toolContext } from './tool-context';

type PostOpts = { mentionAccountIds?: string[]; toAll?: boolean };

/** A recording postToRoom. */
function fakePoster() {
  const calls: { text: string; opts?: PostOpts }[] = [];
  const postToRoom: NonNullable<ToolServices['postToRoom']> = async (text, opts) => {
    calls.push({ text, opts });
    return { messageId: `msg-${calls.length}` };
  };
  return { calls, postToRoom };
}

describe('announce', () => {
  let t: TestDatabase;
  let db: Db;
  const run = async (
    params: unknown,
    o: { member?: string; poster?: ReturnType<typeof fakePoster> | null; platform?: 'console' | 'chatwork' } = {},
  ) => {
    const services = o.poster === null ? {} : { postToRoom: (o.poster ?? fakePoster()).postToRoom };
    const ctx = await toolContext(db, o.member ?? 'suzuki-kenji', { platform: o.platform ?? 'chatwork', services });
    return new ToolExecutor(new ToolRegistry([announce])).run('announce', params, ctx);
  };

  beforeAll(async () => {
    t = await createTestDatabase();
    db = t.db;
    await seedSample(db);
  });
  afterAll(async () => {
    await t.close();
  });

  it('declares high risk (double confirmation) without an extra confirmation flag', () => {
    expect(announce).toMatchObject({
      effects: ['chatwork.post'],
      risk: 'high',
      requiresConfirmation: false,
      requiredLevel: 2,
      paramRoles: { recipients: 'recipients', message: 'text' },
    });
  });

  it("posts one message mentioning exactly the resolved members' accounts on this platform", async () => {
    const poster = fakePoster();
    const message = '明日の会議は10時からです。[To:1002] よろしくお願いします。';
    const r = await run({ recipients: ['田中太郎', '渡辺さん', 'tanaka-taro'], message }, { poster });
    expect(r).toMatchObject({
      status: 'ok',
      output: { posted: true, recipients: 2, notMentioned: [], messageId: 'msg-1' },
    });
    expect(poster.calls).toEqual([{ text: message, opts: { mentionAccountIds: ['1004', '1008'], toAll: false } }]);
  });

  it("uses the platform's own accounts (console ids on the console)", async () => {
    const poster = fakePoster();
    await run({ recipients: ['伊藤さん'], message: 'お疲れさまです' }, { poster, platform: 'console' });
    expect(poster.calls[0]!.opts).toEqual({ mentionAccountIds: ['ito-yui'], toAll: false });
  });

  it('addresses the whole room for "all" (and 「全員」), with no member mentions', async () => {
    const poster = fakePoster();
    expect(await run({ recipients: 'all', message: '本日は17時で閉めます' }, { poster })).toMatchObject({
      status: 'ok',
      output: { recipients: 'all' },
    });
    await run({ recipients: ['全員'], message: '本日は17時で閉めます' }, { poster });
    expect(poster.calls.map((c) => c.opts)).toEqual([{ toAll: true }, { toAll: true }]);
  });

  it('asks which one when a recipient is ambiguous, and posts nothing', async () => {
    const poster = fakePoster();
    const r = await run({ recipients: ['田中さん', '渡辺さん'], message: 'x' }, { poster });
    expect(r.status).toBe('clarify');
    if (r.status === 'clarify')
      expect([...r.options].sort()).toEqual(['田中太郎（東京営業課）', '田中花子（大阪営業課）'].sort());
    expect(poster.calls).toHaveLength(0);
  });

  it('refuses unknown recipients, and posts nothing', async () => {
    const poster = fakePoster();
    expect(await run({ recipients: ['渡辺さん', '架空の人'], message: 'x' }, { poster })).toMatchObject({
      status: 'error',
      code: 'UNKNOWN_PERSON',
    });
    expect(poster.calls).toHaveLength(0);
  });

  it('names recipients without an account here instead of mentioning them; refuses when nobody is reachable', async () => {
    const poster = fakePoster();
    expect(await run({ recipients: ['高橋さん', '伊藤さん'], message: 'x' }, { poster })).toMatchObject({
      status: 'ok',
      output: { recipients: 1, notMentioned: ['高橋亮'] },
    });
    expect(poster.calls[0]!.opts).toEqual({ mentionAccountIds: ['1007'], toAll: false });
    expect(await run({ recipients: ['高橋さん'], message: 'x' }, { poster })).toMatchObject({
      status: 'error',
      code: 'NO_RECIPIENT_ACCOUNT',
    });
    expect(poster.calls).toHaveLength(1);
  });

  it('fails cleanly when the room cannot be posted to', async () => {
    expect(await run({ recipients: 'all', message: 'x' }, { poster: null })).toMatchObject({
      status: 'error',
      modelMessage: 'Posting is not available in this room.',
    });
  });

  it('validates the message and the recipients', async () => {
    expect(await run({ recipients: [], message: 'x' })).toMatchObject({ status: 'error', code: 'INVALID_INPUT' });
    expect(await run({ recipients: 'all', message: '' })).toMatchObject({ status: 'error', code: 'INVALID_INPUT' });
    expect(await run({ recipients: 'all', message: 'a'.repeat(2001) })).toMatchObject({
      status: 'error',
      code: 'INVALID_INPUT',
    });
  });
});
