import { deleteMemory, queryMemory, saveMemory } from '../../handlers/memory';
import type { Db } from '../../src/db/prisma';
import { ToolExecutor } from '../../src/tools/executor';
import { ToolRegistry } from '../../src/tools/registry';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { newKey, seedSample, toolContext } from './tool-context';

const defs = [saveMemory, queryMemory, deleteMemory];

describe('memory capabilities', () => {
  let t: TestDatabase;
  let db: Db;
  const exec = () => new ToolExecutor(new ToolRegistry(defs));
  const run = async (member: string, tool: string, params: unknown, opts: { key?: string } = {}) =>
    exec().run(tool, params, await toolContext(db, member, opts));
  const ok = async (member: string, tool: string, params: unknown) => {
    const r = await run(member, tool, params);
    if (r.status !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(r)}`);
    return r.output as Record<string, unknown>;
  };
  const contents = (out: Record<string, unknown>) =>
    (out.memories as { content: string }[]).map((m) => m.content).sort();

  beforeAll(async () => {
    t = await createTestDatabase();
    db = t.db;
    await seedSample(db);
  });
  afterAll(async () => {
    await t.close();
  });

  it('declares its meta', () => {
    expect(saveMemory).toMatchObject({
      effects: ['db.memory_create'],
      risk: 'none',
      requiredLevel: 1,
      paramRoles: { subject: 'memory_subject', content: 'text' },
    });
    expect(saveMemory.organisationWide?.({ kind: 'fact' })).toBe(true);
    expect(saveMemory.organisationWide?.({ kind: 'fact', subject: '田中さん' })).toBe(false);
    expect(saveMemory.organisationWide?.({ kind: 'preference' })).toBe(false);
    expect(queryMemory).toMatchObject({ effects: [], requiredLevel: 1, paramRoles: { subject: 'target_user' } });
    expect(deleteMemory).toMatchObject({
      effects: ['db.memory_delete'],
      risk: 'high',
      requiredLevel: 1,
      paramRoles: { memory_ids: 'deletion' },
    });
  });

  describe('save_memory', () => {
    it('stores a preference about the sender when no subject is given, with the room', async () => {
      const out = await ok('watanabe-sho', 'save_memory', { kind: 'preference', content: 'コーヒー派' });
      expect(out).toMatchObject({ kind: 'preference', subject: '渡辺翔', alreadySaved: false });
      const row = await db.memory.findUniqueOrThrow({ where: { id: out.memoryId as string } });
      expect(row).toMatchObject({
        orgId: 'acme',
        subjectMemberId: 'watanabe-sho',
        createdByMemberId: 'watanabe-sho',
        roomId: 'console-general',
      });
      const member = await db.member.findUniqueOrThrow({ where: { orgId_id: { orgId: 'acme', id: 'watanabe-sho' } } });
      expect(member.preferences).toEqual({});
    });

    it('is idempotent per idempotency key (a retried turn stores once)', async () => {
      const key = newKey();
      const first = await run('ito-yui', 'save_memory', { kind: 'fact', content: '開発部の定例は水曜' }, { key });
      const retry = await run('ito-yui', 'save_memory', { kind: 'fact', content: '開発部の定例は水曜' }, { key });
      expect(first.status).toBe('ok');
      expect(retry).toMatchObject({ status: 'ok', output: { alreadySaved: true } });
      expect((retry as { output: { memoryId: string } }).output.memoryId).toBe(
        (first as { output: { memoryId: string } }).output.memoryId,
      );
      expect(await db.memory.count({ where: { idempotencyKey: key } })).toBe(1);
    });

    it('resolves a person subject, and 「自分」 to the sender', async () => {
      const out = await ok('suzuki-kenji', 'save_memory', {
        kind: 'person',
        subject: '渡辺さん',
        content: '資料作成が速い',
      });
      expect(out.subject).toBe('渡辺翔');
      const self = await ok('suzuki-kenji', 'save_memory', { kind: 'person', subject: '自分', content: '朝型' });
      expect(self.subject).toBe('鈴木健二');
    });

    it('asks which one when the subject is ambiguous, and stores nothing', async () => {
      const before = await db.memory.count();
      const r = await run('suzuki-kenji', 'save_memory', {
        kind: 'person',
        subject: '田中さん',
        content: '甘いものが好き',
      });
      expect(r.status).toBe('clarify');
      if (r.status === 'clarify') expect(r.options.join(' ')).toEqual(expect.stringContaining('田中太郎'));
      if (r.status === 'clarify') expect(r.options.join(' ')).toEqual(expect.stringContaining('田中花子'));
      expect(await db.memory.count()).toBe(before);
    });

    it('refuses unknown subjects and person memories without a subject', async () => {
      expect(
        await run('suzuki-kenji', 'save_memory', { kind: 'person', subject: '存在しない人', content: 'x' }),
      ).toMatchObject({ status: 'error', code: 'UNKNOWN_PERSON' });
      expect(await run('suzuki-kenji', 'save_memory', { kind: 'person', content: 'x' })).toMatchObject({
        status: 'error',
        code: 'MISSING_SUBJECT',
      });
      expect(await run('suzuki-kenji', 'save_memory', { kind: 'fact', content: '' })).toMatchObject({
        status: 'error',
        code: 'INVALID_INPUT',
      });
      expect(await run('suzuki-kenji', 'save_memory', { kind: 'fact', content: 'a'.repeat(1001) })).toMatchObject({
        status: 'error',
        code: 'INVALID_INPUT',
      });
    });
  });

  describe('query_memory visibility', () => {
    beforeAll(async () => {
      await db.memory.deleteMany({});
      await db.organization.create({ data: { id: 'other', name: 'Other' } });
      const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, n));
      await db.memory.createMany({
        data: [
          {
            id: 'm-fact',
            orgId: 'acme',
            kind: 'fact',
            content: '経費精算の締めは毎月25日',
            createdByMemberId: 'yamada-ichiro',
            createdAt: at(1),
          },
          {
            id: 'm-ito',
            orgId: 'acme',
            kind: 'preference',
            subjectMemberId: 'ito-yui',
            content: '紅茶派',
            createdByMemberId: 'ito-yui',
            createdAt: at(2),
          },
          {
            id: 'm-hanako',
            orgId: 'acme',
            kind: 'person',
            subjectMemberId: 'tanaka-hanako',
            content: '大阪の顧客に強い',
            createdByMemberId: 'suzuki-kenji',
            createdAt: at(3),
          },
          {
            id: 'm-watanabe',
            orgId: 'acme',
            kind: 'person',
            subjectMemberId: 'watanabe-sho',
            content: '資料作成が得意',
            createdByMemberId: 'tanaka-taro',
            createdAt: at(4),
          },
          {
            id: 'm-taro',
            orgId: 'acme',
            kind: 'preference',
            subjectMemberId: 'tanaka-taro',
            content: '朝は忙しい',
            createdByMemberId: 'tanaka-taro',
            createdAt: at(5),
          },
          {
            id: 'm-ito-fact',
            orgId: 'acme',
            kind: 'fact',
            subjectMemberId: 'ito-yui',
            content: '伊藤さんはAWS資格保有',
            createdByMemberId: 'yamada-ichiro',
            createdAt: at(6),
          },
          { id: 'm-other', orgId: 'other', kind: 'fact', content: '他社の事実', createdAt: at(7) },
        ],
      });
    });

    it.each([
      ['watanabe-sho', ['経費精算の締めは毎月25日', '資料作成が得意']],
      ['ito-yui', ['伊藤さんはAWS資格保有', '紅茶派', '経費精算の締めは毎月25日']],
      ['tanaka-taro', ['朝は忙しい', '経費精算の締めは毎月25日', '資料作成が得意']],
      ['suzuki-kenji', ['大阪の顧客に強い', '朝は忙しい', '経費精算の締めは毎月25日', '資料作成が得意']],
      [
        'yamada-ichiro',
        [
          '伊藤さんはAWS資格保有',
          '大阪の顧客に強い',
          '朝は忙しい',
          '紅茶派',
          '経費精算の締めは毎月25日',
          '資料作成が得意',
        ],
      ],
    ])('%s sees only what their level and scope allow', async (member, expected) => {
      expect(contents(await ok(member, 'query_memory', {}))).toEqual([...expected].sort());
    });

    it('filters by keyword and by subject', async () => {
      expect(contents(await ok('watanabe-sho', 'query_memory', { query: '経費' }))).toEqual([
        '経費精算の締めは毎月25日',
      ]);
      expect(contents(await ok('suzuki-kenji', 'query_memory', { subject: '渡辺さん' }))).toEqual(['資料作成が得意']);
      expect(contents(await ok('ito-yui', 'query_memory', { subject: '田中花子' }))).toEqual([]);
    });

    it('returns at most 20, newest first', async () => {
      await db.memory.createMany({
        data: Array.from({ length: 25 }, (_, i) => ({
          orgId: 'acme',
          kind: 'fact',
          content: `お知らせ${i}`,
          createdAt: new Date(Date.UTC(2026, 1, 1, 0, i)),
        })),
      });
      const out = await ok('watanabe-sho', 'query_memory', { query: 'お知らせ' });
      const list = out.memories as { content: string }[];
      expect(list).toHaveLength(20);
      expect(list[0]!.content).toBe('お知らせ24');
      expect(list[19]!.content).toBe('お知らせ5');
    });
  });

  describe('delete_memory', () => {
    it('deletes only memories the sender created or that are about them; reports the rest', async () => {
      await db.memory.createMany({
        data: [
          {
            id: 'd-about',
            orgId: 'acme',
            kind: 'person',
            subjectMemberId: 'ito-yui',
            content: 'a',
            createdByMemberId: 'yamada-ichiro',
          },
          {
            id: 'd-own',
            orgId: 'acme',
            kind: 'person',
            subjectMemberId: 'takahashi-ryo',
            content: 'b',
            createdByMemberId: 'ito-yui',
          },
          { id: 'd-other', orgId: 'acme', kind: 'fact', content: 'c', createdByMemberId: 'yamada-ichiro' },
        ],
      });
      const out = await ok('ito-yui', 'delete_memory', { memory_ids: ['d-about', 'd-own', 'd-other', 'no-such-id'] });
      expect(out).toEqual({ deleted: 2, notDeleted: 2, notDeletedIds: ['d-other', 'no-such-id'] });
      expect(
        await db.memory.findMany({ where: { id: { in: ['d-about', 'd-own', 'd-other'] } }, select: { id: true } }),
      ).toEqual([{ id: 'd-other' }]);
    });

    it("lets level 5+ delete any memory of the organisation, never another organisation's", async () => {
      const out = await ok('sato-misaki', 'delete_memory', { memory_ids: ['d-other', 'm-other'] });
      expect(out).toMatchObject({ deleted: 1, notDeleted: 1 });
      expect(await db.memory.count({ where: { id: 'm-other' } })).toBe(1);
    });

    it('validates the id list', async () => {
      expect(await run('ito-yui', 'delete_memory', { memory_ids: [] })).toMatchObject({
        status: 'error',
        code: 'INVALID_INPUT',
      });
      expect(
        await run('ito-yui', 'delete_memory', { memory_ids: Array.from({ length: 51 }, (_, i) => `x${i}`) }),
      ).toMatchObject({ status: 'error', code: 'INVALID_INPUT' });
    });
  });
});
