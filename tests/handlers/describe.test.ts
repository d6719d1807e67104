import { ToolExecutor } from '../../src/tools/executor';
import { handlers } from '../../handlers';
import { ToolRegistry } from '../../src/tools/registry';
import { diffEffects, formatWhen, genericEffect, renderEffect } from '../../src/tools/describe';
import type { DescribeContext } from '../../src/tools/types';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { NOW, seedSample, toolContext } from './tool-context';

/** Issue 7 point 3: what a confirmation states comes from the checked call (the tools' `describe`). */
describe('describing a call before it runs', () => {
  let t: TestDatabase;
  const ex = new ToolExecutor(new ToolRegistry(handlers));
  beforeAll(async () => {
    t = await createTestDatabase();
    await seedSample(t.db);
  });
  afterAll(async () => t.close());

  async function dctx(
    memberId: string,
    opts: { lang?: 'ja' | 'en'; platform?: 'console' | 'chatwork' } = {},
  ): Promise<DescribeContext> {
    const { idempotencyKey: _k, services, ...rest } = await toolContext(t.db, memberId, { platform: opts.platform });
    return { ...rest, services: { db: services.db }, lang: opts.lang ?? 'ja' };
  }
  const facts = (r: Awaited<ReturnType<ToolExecutor['describe']>>) =>
    r.status === 'ok' ? Object.fromEntries(r.effect.facts.map((f) => [f.label, f.value])) : r;

  it('create_task: the directory name with department, an absolute date in Tokyo, the ChatWork mirror', async () => {
    const input = { assignee: '太郎さん', title: ' 見積書 ', due: '2026-11-24' };
    const r = await ex.describe('create_task', input, await dctx('suzuki-kenji', { platform: 'chatwork' }));
    expect(r).toMatchObject({ status: 'ok', effect: { summary: '田中太郎さんにタスクを作成します。' } });
    expect(facts(r)).toEqual({
      担当: '田中太郎（東京営業課）',
      内容: '見積書',
      期限: '11/24（火）',
      ChatWork: 'ChatWork のタスクにも登録します',
    });
    const inEnglish = { assignee: 'tanaka-taro', title: 'Quote', due: '2026-11-24T15:00:00+09:00' };
    const en = await ex.describe('create_task', inEnglish, await dctx('suzuki-kenji', { lang: 'en' }));
    expect(facts(en)).toEqual({ Assignee: '田中太郎（東京営業課）', Task: 'Quote', Due: 'Tue, Nov 24 15:00' });
  });

  it('asks instead of describing an ambiguous person, and refuses bad input like running would', async () => {
    const ask = await ex.describe('create_task', { assignee: '田中', title: 'x' }, await dctx('suzuki-kenji'));
    expect(ask).toMatchObject({ status: 'clarify', question: '田中さんが2人います。どちらの方ですか？' });
    expect((ask as { options: string[] }).options.sort()).toEqual(
      ['田中太郎（東京営業課）', '田中花子（大阪営業課）'].sort(),
    );
    const task = async (input: Record<string, unknown>) =>
      ex.describe('create_task', input, await dctx('suzuki-kenji'));
    expect(await task({ assignee: '誰か', title: 'x' })).toMatchObject({ status: 'error', code: 'UNKNOWN_PERSON' });
    expect(await task({ assignee: '田中太郎' })).toMatchObject({ status: 'error', code: 'INVALID_INPUT' });
    expect(await task({ assignee: '田中太郎', title: 'x', due: '来週のどこか' })).toMatchObject({
      status: 'error',
      code: 'INVALID_DATE',
    });
  });

  it('create_reminder and announce: time in the org time zone, the person, the recipients counted', async () => {
    const reminder = { when: '2026-11-21', text: '請求書', person: '鈴木部長' };
    const rem = await ex.describe('create_reminder', reminder, await dctx('tanaka-taro'));
    expect(facts(rem)).toEqual({ 日時: '11/21（土）09:00', 相手: '鈴木健二', 内容: '請求書' });
    const past = await ex.describe('create_reminder', { when: '2026-11-19', text: 'x' }, await dctx('tanaka-taro'));
    expect(past).toMatchObject({ status: 'error', code: 'PAST_TIME' });
    const announcement = { recipients: ['田中太郎', 'tanaka-taro', '佐藤美咲'], message: '明日は休業です' };
    const ann = await ex.describe('announce', announcement, await dctx('yamada-ichiro'));
    expect(facts(ann)).toEqual({ 宛先: '2人（田中太郎、佐藤美咲）', 本文: '明日は休業です' });
    const all = await ex.describe('announce', { recipients: 'all', message: 'x' }, await dctx('yamada-ichiro'));
    expect(facts(all)).toMatchObject({ 宛先: 'このルームの全員' });
  });

  it('delete_memory: what will be deleted, and how many cannot be', async () => {
    const mine = await t.db.memory.create({
      data: {
        orgId: 'acme',
        kind: 'preference',
        subjectMemberId: 'ito-yui',
        content: 'コーヒー派',
        createdByMemberId: 'ito-yui',
      },
    });
    const other = await t.db.memory.create({
      data: {
        orgId: 'acme',
        kind: 'fact',
        content: '締めは25日',
        createdByMemberId: 'sato-misaki',
      },
    });
    const r = await ex.describe('delete_memory', { memory_ids: [mine.id, other.id] }, await dctx('ito-yui'));
    expect(r).toMatchObject({ status: 'ok', effect: { summary: '記憶を1件削除します。' } });
    expect(facts(r)).toEqual({ 削除するもの: '「コーヒー派」', 削除できないもの: '1件' });
    expect(await t.db.memory.count()).toBe(2);
  });

  it('a tool without describe lists its validated parameters', () => {
    expect(genericEffect('do_it', { a: ' x ', list: ['p', 'q'], empty: '' }, 'ja')).toEqual({
      summary: '「do_it」を実行します。',
      done: '「do_it」を実行しました。',
      facts: [
        { key: 'a', label: 'a', value: 'x' },
        { key: 'list', label: 'list', value: 'p、q' },
      ],
    });
  });
});

describe('describe helpers', () => {
  it('formatWhen: month/day and weekday in the time zone, the year only when it is not this one', () => {
    const opts = { timezone: 'Asia/Tokyo', lang: 'ja' as const, now: NOW };
    expect(formatWhen(new Date('2026-11-23T14:59:59Z'), { ...opts, dateOnly: true })).toBe('11/23（月）');
    expect(formatWhen(new Date('2026-11-23T15:00:00Z'), { ...opts, dateOnly: false })).toBe('11/24（火）00:00');
    expect(formatWhen(new Date('2027-01-05T03:00:00Z'), { ...opts, dateOnly: false })).toBe('2027/1/5（火）12:00');
    const nextYear = new Date('2027-01-05T03:00:00Z');
    expect(formatWhen(nextYear, { ...opts, lang: 'en', dateOnly: true })).toBe('Tue, Jan 5 2027');
  });

  it('diffEffects: changed, added and removed facts by key', () => {
    const f = (key: string, label: string, value: string) => ({ key, label, value });
    const before = {
      summary: 's',
      facts: [f('due', '期限', '11/24（火）'), f('note', 'メモ', 'a'), f('t', '内容', 'x')],
    };
    const after = {
      summary: 's',
      facts: [f('due', '期限', '11/27（金）'), f('t', '内容', 'x'), f('cw', 'ChatWork', 'yes')],
    };
    expect(diffEffects(before, after, 'ja')).toEqual([
      '期限: 11/24（火） → 11/27（金）',
      'ChatWork: （なし） → yes',
      'メモ: a → （なし）',
    ]);
    expect(diffEffects(after, after, 'ja')).toEqual([]);
    expect(renderEffect(before)).toBe('s\n・期限: 11/24（火）\n・メモ: a\n・内容: x');
  });
});
