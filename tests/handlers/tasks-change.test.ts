import nock from 'nock';
import { handlers } from '../../handlers';
import { cancelTask, changeTask } from '../../handlers/tasks';
import { ChatworkClient } from '../../src/adapters/chatwork';
import { authorizeWithLookup } from '../../src/authorization';
import { silentLogger } from '../../src/observability/logger';
import { ToolExecutor } from '../../src/tools/executor';
import { ToolRegistry } from '../../src/tools/registry';
import type { DescribeContext } from '../../src/tools/types';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { newKey, seedSample, toolContext } from './tool-context';

/** Changing and cancelling a task (issue 31): the tasks table is the truth, ChatWork is kept in step. */
describe('change_task and cancel_task', () => {
  let t: TestDatabase;
  const registry = new ToolRegistry(handlers);
  const exec = () => new ToolExecutor(registry);
  const CW = 'https://api.chatwork.test';
  const client = () =>
    new ChatworkClient({
      apiToken: 'cw-test-token-0123456789',
      baseUrl: `${CW}/v2`,
      logger: silentLogger(),
      maxRetries: 0,
      sleep: async () => undefined,
    });
  const unix = (iso: string) => Math.floor(new Date(iso).getTime() / 1000);

  beforeAll(async () => {
    t = await createTestDatabase();
    await seedSample(t.db);
    nock.disableNetConnect();
  });
  afterAll(async () => {
    nock.enableNetConnect();
    await t.close();
  });
  beforeEach(async () => {
    nock.cleanAll();
    await t.db.task.deleteMany();
  });

  /** A task as create_task leaves it: 「企画書」 for 田中太郎 due Fri 11/27, given by 鈴木, mirrored on ChatWork. */
  async function task(over: Record<string, unknown> = {}) {
    return t.db.task.create({
      data: {
        orgId: 'acme',
        platform: 'chatwork',
        roomId: '5001',
        title: '企画書',
        assigneeMemberId: 'tanaka-taro',
        createdByMemberId: 'suzuki-kenji',
        dueAt: new Date('2026-11-27T14:59:59Z'),
        chatworkTaskId: '4242',
        ...over,
      },
    });
  }

  async function dctx(memberId: string, lang: 'ja' | 'en' = 'ja'): Promise<DescribeContext> {
    const { idempotencyKey: _k, services, ...rest } = await toolContext(t.db, memberId, { platform: 'chatwork' });
    return { ...rest, services: { db: services.db }, lang };
  }

  /** The AuthorizationGate's decision for a proposal by a sample member (from the database, as a turn does). */
  const gate = (memberId: string, toolName: string, parameters: Record<string, unknown>) =>
    authorizeWithLookup(t.db, {
      orgId: 'acme',
      platform: 'console',
      roomId: 'console-general',
      accountId: memberId,
      tool: registry.get(toolName),
      proposal: { id: 'p1', toolName, parameters },
    });

  describe('the confirmation question', () => {
    it('states whose task, the title and the dates before and after, and what happens on ChatWork', async () => {
      const row = await task();
      const r = await exec().describe(
        'change_task',
        { task_id: row.id, due: '2026-12-04' },
        await dctx('suzuki-kenji'),
      );
      expect(r).toMatchObject({
        status: 'ok',
        effect: { summary: '田中太郎さんの『企画書』の期限を11/27（金）→12/4（金）に変更します。' },
      });
      if (r.status !== 'ok') return;
      expect(Object.fromEntries(r.effect.facts.map((f) => [f.label, f.value]))).toEqual({
        タスク: '企画書',
        担当: '田中太郎',
        期限: '11/27（金）→12/4（金）',
        ChatWork: 'ChatWork ではタスクを編集できないため、元のタスクを完了にして新しいタスクを作り直します',
      });
    });

    it('names the new assignee with their department, and says it in English for an English speaker', async () => {
      const row = await task();
      const ja = await exec().describe(
        'change_task',
        { task_id: row.id, assignee: '佐藤さん' },
        await dctx('suzuki-kenji'),
      );
      expect(ja).toMatchObject({
        status: 'ok',
        effect: { summary: '田中太郎さんの『企画書』の担当を田中太郎さん→佐藤美咲さんに変更します。' },
      });
      const en = await exec().describe(
        'change_task',
        { task_id: row.id, due: '2027-01-04T10:00:00+09:00' },
        await dctx('suzuki-kenji', 'en'),
      );
      expect(en).toMatchObject({
        status: 'ok',
        effect: { summary: 'Change the due date Fri, Nov 27→Mon, Jan 4 2027 10:00 of 田中太郎\'s task "企画書".' },
      });
    });

    it('cancel: whose task, and that ChatWork marks it done (it cannot delete a task)', async () => {
      const row = await task();
      const r = await exec().describe('cancel_task', { task_id: row.id }, await dctx('suzuki-kenji'));
      expect(r).toMatchObject({ status: 'ok', effect: { summary: '田中太郎さんの『企画書』を取り消します。' } });
      if (r.status === 'ok')
        expect(r.effect.facts.find((f) => f.key === 'chatwork')?.value).toBe(
          'ChatWork ではタスクを削除できないため、ChatWork のタスクは完了にします',
        );
    });
  });

  describe('who may (the AuthorizationGate, from the database)', () => {
    it("one's own task runs; another's in scope is asked first; else refused", async () => {
      const own = await task();
      expect(await gate('tanaka-taro', 'change_task', { task_id: own.id, due: '2026-12-04' })).toMatchObject({
        result: 'ALLOWED',
      });
      // 鈴木 (level 4, 営業部) gave it to 田中太郎: it is 田中太郎's task, so changing it is asked first.
      expect(await gate('suzuki-kenji', 'change_task', { task_id: own.id, due: '2026-12-04' })).toMatchObject({
        result: 'CONFIRM',
        reasonCode: 'Z_CONFIRM_PERSON',
      });
      expect(await gate('suzuki-kenji', 'cancel_task', { task_id: own.id })).toMatchObject({ result: 'CONFIRM' });
      // 伊藤 (level 2, 開発部) cannot see 営業部.
      expect(await gate('ito-yui', 'cancel_task', { task_id: own.id })).toMatchObject({
        result: 'DENIED',
        reasonCode: 'Z_OUT_OF_SCOPE_USER',
      });
      // 渡辺 (level 1, contractor) may not change tasks at all, not even their own.
      const his = await task({ assigneeMemberId: 'watanabe-sho' });
      expect(await gate('watanabe-sho', 'change_task', { task_id: his.id, due: '2026-12-04' })).toMatchObject({
        result: 'DENIED',
        reasonCode: 'Z_LEVEL_TOO_LOW',
      });
    });

    it('a new assignee outside the scope is refused; an unknown task id too', async () => {
      const mine = await task({ assigneeMemberId: 'tanaka-hanako', createdByMemberId: null });
      expect(await gate('tanaka-hanako', 'change_task', { task_id: mine.id, assignee: '伊藤さん' })).toMatchObject({
        result: 'DENIED',
        reasonCode: 'Z_OUT_OF_SCOPE_USER',
      });
      expect(await gate('tanaka-hanako', 'change_task', { task_id: 'no-such-task', due: '2026-12-04' })).toMatchObject({
        result: 'DENIED',
        reasonCode: 'Z_UNKNOWN_TARGET',
      });
    });
  });

  describe('on ChatWork (the real client against the fake API)', () => {
    it('a new due date: POST the new task (limit in unix seconds, a note why), then PUT the old one done', async () => {
      const row = await task();
      const calls: string[] = [];
      let form: Record<string, string> = {};
      const api = nock(CW, { reqheaders: { 'x-chatworktoken': 'cw-test-token-0123456789' } })
        .post('/v2/rooms/5001/tasks')
        .reply(200, (_uri, body) => {
          calls.push('POST /rooms/5001/tasks');
          form = Object.fromEntries(new URLSearchParams(String(body)));
          return { task_ids: [5151] };
        })
        .put('/v2/rooms/5001/tasks/4242/status')
        .reply(200, (_uri, body) => {
          calls.push(`PUT /rooms/5001/tasks/4242/status ${String(body)}`);
          return { task_id: 4242 };
        });
      const ctx = await toolContext(t.db, 'suzuki-kenji', { platform: 'chatwork', services: { chatwork: client() } });
      const r = await exec().run('change_task', { task_id: row.id, due: '2026-12-04' }, ctx);
      expect(r).toMatchObject({
        status: 'ok',
        output: {
          taskId: row.id,
          title: '企画書',
          assignee: { memberId: 'tanaka-taro', name: '田中太郎' },
          due: '2026-12-04',
          changed: ['due'],
          before: { title: '企画書', assignee: '田中太郎', due: '2026-11-27' },
          chatwork: 'recreated',
          alreadyChanged: false,
        },
      });
      expect(r).toMatchObject({ output: { chatworkNote: expect.stringContaining('ChatWork cannot edit a task') } });
      expect(api.isDone()).toBe(true);
      expect(calls).toEqual(['POST /rooms/5001/tasks', 'PUT /rooms/5001/tasks/4242/status body=done']);
      expect(form).toEqual({
        body: '企画書\n（Hisho: 期限 11/27（金）→12/4（金）のため作り直したタスクです。元のタスクは完了にしました）',
        to_ids: '1004',
        limit: String(unix('2026-12-04T23:59:59+09:00')),
        limit_type: 'date',
      });
      const stored = await t.db.task.findUniqueOrThrow({ where: { id: row.id } });
      expect(stored).toMatchObject({ status: 'open', chatworkTaskId: '5151', title: '企画書' });
      expect(stored.dueAt?.toISOString()).toBe('2026-12-04T14:59:59.000Z');
      expect(await t.db.taskChange.findMany()).toMatchObject([
        { taskId: row.id, kind: 'change', chatwork: 'recreated', oldChatworkTaskId: '4242', newChatworkTaskId: '5151' },
      ]);

      // The turn is retried with the same key (the model may even word the call differently): nothing is sent.
      const again = await new ToolExecutor(registry).run('change_task', { task_id: row.id, due: '2026-12-05' }, ctx);
      expect(again).toMatchObject({
        status: 'ok',
        output: { due: '2026-12-04', chatwork: 'recreated', alreadyChanged: true },
      });
      expect(nock.pendingMocks()).toEqual([]);
      expect(await t.db.taskChange.count()).toBe(1);
      expect((await t.db.task.findUniqueOrThrow({ where: { id: row.id } })).dueAt?.toISOString()).toBe(
        '2026-12-04T14:59:59.000Z',
      );
    });

    it('a new assignee gets the new ChatWork task; one without a ChatWork account gets none', async () => {
      const a = await task();
      let form: Record<string, string> = {};
      nock(CW)
        .post('/v2/rooms/5001/tasks')
        .reply(200, (_uri, body) => {
          form = Object.fromEntries(new URLSearchParams(String(body)));
          return { task_ids: [6001] };
        })
        .put('/v2/rooms/5001/tasks/4242/status', 'body=done')
        .reply(200, { task_id: 4242 });
      const ctx = await toolContext(t.db, 'suzuki-kenji', { platform: 'chatwork', services: { chatwork: client() } });
      const r = await exec().run('change_task', { task_id: a.id, assignee: '佐藤さん' }, ctx);
      expect(r).toMatchObject({
        status: 'ok',
        output: {
          assignee: { memberId: 'sato-misaki', name: '佐藤美咲' },
          changed: ['assignee'],
          chatwork: 'recreated',
        },
      });
      expect(form).toMatchObject({ to_ids: '1002', limit: String(unix('2026-11-27T23:59:59+09:00')) });
      expect(form.body).toContain('担当 田中太郎さんから変更');
      expect(nock.isDone()).toBe(true);

      // 高橋亮 has no ChatWork account: the old ChatWork task is completed, no new one is made.
      const b = await task({ chatworkTaskId: '4343' });
      nock(CW).put('/v2/rooms/5001/tasks/4343/status', 'body=done').reply(200, { task_id: 4343 });
      const r2 = await exec().run(
        'change_task',
        { task_id: b.id, assignee: '高橋亮' },
        await toolContext(t.db, 'yamada-ichiro', { platform: 'chatwork', services: { chatwork: client() } }),
      );
      expect(r2).toMatchObject({ status: 'ok', output: { chatwork: 'completed' } });
      expect(nock.isDone()).toBe(true);
      expect(await t.db.task.findUniqueOrThrow({ where: { id: b.id } })).toMatchObject({
        assigneeMemberId: 'takahashi-ryo',
        chatworkTaskId: null,
      });
    });

    it('a 502 on the new task is not repeated: unknown, and a retry sends nothing', async () => {
      const row = await task();
      nock(CW).post('/v2/rooms/5001/tasks').once().reply(502);
      const ctx = await toolContext(t.db, 'tanaka-taro', { platform: 'chatwork', services: { chatwork: client() } });
      const r = await exec().run('change_task', { task_id: row.id, title: '企画書（改訂版）' }, ctx);
      expect(r).toMatchObject({ status: 'ok', output: { title: '企画書（改訂版）', chatwork: 'unknown' } });
      expect(r).toMatchObject({ output: { chatworkNote: expect.stringContaining('check ChatWork') } });
      expect(nock.isDone()).toBe(true);
      const again = await new ToolExecutor(registry).run('change_task', { task_id: row.id, title: '企画書v2' }, ctx);
      expect(again).toMatchObject({ status: 'ok', output: { title: '企画書（改訂版）', alreadyChanged: true } });
      expect(await t.db.task.findUniqueOrThrow({ where: { id: row.id } })).toMatchObject({ chatworkTaskId: '4242' });
    });

    it('cancel: the ChatWork task is marked done once, the task is cancelled, a retry sends nothing', async () => {
      const row = await task();
      nock(CW).put('/v2/rooms/5001/tasks/4242/status', 'body=done').once().reply(200, { task_id: 4242 });
      const ctx = await toolContext(t.db, 'tanaka-taro', { platform: 'chatwork', services: { chatwork: client() } });
      const r = await exec().run('cancel_task', { task_id: row.id }, ctx);
      expect(r).toMatchObject({
        status: 'ok',
        output: {
          taskId: row.id,
          title: '企画書',
          status: 'cancelled',
          chatwork: 'completed',
          alreadyCancelled: false,
        },
      });
      expect(r).toMatchObject({ output: { chatworkNote: expect.stringContaining('cannot delete') } });
      expect(nock.isDone()).toBe(true);
      const again = await new ToolExecutor(registry).run('cancel_task', { task_id: row.id }, ctx);
      expect(again).toMatchObject({ status: 'ok', output: { alreadyCancelled: true, chatwork: 'completed' } });
      const stored = await t.db.task.findUniqueOrThrow({ where: { id: row.id } });
      expect(stored.status).toBe('cancelled');
      expect(stored.completedAt?.toISOString()).toBe('2026-11-20T01:00:00.000Z');
    });
  });

  describe('without a ChatWork task (Discord, the console): the tasks table is the truth', () => {
    it('changes the row and says nothing about ChatWork', async () => {
      const row = await task({ platform: 'console', roomId: 'console-general', chatworkTaskId: null });
      const r = await exec().run(
        'change_task',
        { task_id: row.id, due: '2026-12-01T15:00:00+09:00' },
        await toolContext(t.db, 'tanaka-taro', { services: { chatwork: client() } }),
      );
      expect(r).toMatchObject({
        status: 'ok',
        output: { due: '2026-12-01T15:00:00+09:00', chatwork: 'skipped', chatworkNote: null },
      });
      expect(nock.pendingMocks()).toEqual([]);
    });

    it('a ChatWork task changed where ChatWork is not configured is reported as unchanged there', async () => {
      const row = await task();
      const r = await exec().run('cancel_task', { task_id: row.id }, await toolContext(t.db, 'tanaka-taro'));
      expect(r).toMatchObject({ status: 'ok', output: { chatwork: 'unreachable' } });
      expect(r).toMatchObject({ output: { chatworkNote: expect.stringContaining('ChatWork task is unchanged') } });
    });
  });

  describe('refusals by the handler', () => {
    it('unknown, done and cancelled tasks; nothing to change; an unknown or ambiguous new assignee', async () => {
      const ctx = () => toolContext(t.db, 'suzuki-kenji');
      expect(await exec().run('change_task', { task_id: 'nope', due: '2026-12-04' }, await ctx())).toMatchObject({
        status: 'error',
        code: 'NOT_FOUND',
      });
      const done = await task({ status: 'done' });
      expect(await exec().run('change_task', { task_id: done.id, due: '2026-12-04' }, await ctx())).toMatchObject({
        status: 'error',
        code: 'TASK_CLOSED',
      });
      expect(await exec().run('cancel_task', { task_id: done.id }, await ctx())).toMatchObject({
        status: 'error',
        code: 'TASK_CLOSED',
      });
      const row = await task({ chatworkTaskId: null });
      expect(await exec().run('change_task', { task_id: row.id }, await ctx())).toMatchObject({
        status: 'error',
        code: 'NO_CHANGE',
      });
      expect(await exec().run('change_task', { task_id: row.id, due: '2026-11-27' }, await ctx())).toMatchObject({
        status: 'error',
        code: 'NO_CHANGE',
      });
      expect(await exec().run('change_task', { task_id: row.id, due: '金曜' }, await ctx())).toMatchObject({
        status: 'error',
        code: 'INVALID_DATE',
      });
      expect(await exec().run('change_task', { task_id: row.id, assignee: '木村さん' }, await ctx())).toMatchObject({
        status: 'error',
        code: 'UNKNOWN_PERSON',
      });
      const amb = await exec().run('change_task', { task_id: row.id, assignee: '田中さん' }, await ctx());
      expect(amb).toMatchObject({
        status: 'clarify',
        question: '田中さんが2人います。どちらの方ですか？',
        options: ['田中花子（大阪営業課）', '田中太郎（東京営業課）'],
      });
      expect(
        await exec().run('change_task', { task_id: row.id, due: '2026-12-04' }, await toolContext(t.db, null)),
      ).toMatchObject({ status: 'error', code: 'NO_MEMBER' });
      // Nothing was changed by any of these.
      expect(await t.db.taskChange.count()).toBe(0);
      expect((await t.db.task.findUniqueOrThrow({ where: { id: row.id } })).dueAt?.toISOString()).toBe(
        '2026-11-27T14:59:59.000Z',
      );
    });

    it('two attempts of the same call racing: one change, one answer', async () => {
      const row = await task({ chatworkTaskId: null });
      const key = newKey();
      const [a, b] = await Promise.all(
        [1, 2].map(async () =>
          new ToolExecutor(registry).run(
            'change_task',
            { task_id: row.id, due: '2026-12-04' },
            await toolContext(t.db, 'tanaka-taro', { key }),
          ),
        ),
      );
      expect([a?.status, b?.status]).toEqual(['ok', 'ok']);
      expect(await t.db.taskChange.count()).toBe(1);
    });
  });

  it('are the declared tools', () => {
    expect(registry.get('change_task')).toBe(changeTask);
    expect(registry.get('cancel_task')).toBe(cancelTask);
  });
});
