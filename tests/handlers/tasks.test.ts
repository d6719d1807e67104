import nock from 'nock';
import { createTask, completeTask, searchTasks } from '../../handlers/tasks';
import { ChatworkClient } from '../../src/adapters/chatwork';
import { silentLogger } from '../../src/observability/logger';
import { ToolExecutor } from '../../src/tools/executor';
import { handlers } from '../../handlers';
import { ToolRegistry } from '../../src/tools/registry';
import type { ToolServices } from '../../src/tools/types';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { newKey, seedSample, toolContext } from './tool-context';

type Chatwork = NonNullable<ToolServices['chatwork']>;
type TaskCall = Parameters<Chatwork['createTask']>;

/** Records ChatWork calls; `fail` makes every call throw. */
function fakeChatwork(opts: { fail?: boolean } = {}) {
  const created: TaskCall[] = [];
  const updated: [string, string, string][] = [];
  const client: Chatwork = {
    async createTask(roomId, t) {
      if (opts.fail) throw new Error('ChatWork is down');
      created.push([roomId, t]);
      return { taskIds: [String(9000 + created.length)] };
    },
    async updateTaskStatus(roomId, taskId, status) {
      if (opts.fail) throw new Error('ChatWork is down');
      updated.push([roomId, taskId, status]);
      return undefined;
    },
  };
  return { client, created, updated };
}

const unix = (iso: string) => Math.floor(new Date(iso).getTime() / 1000);
const exec = () => new ToolExecutor(new ToolRegistry([createTask, completeTask, searchTasks]));

describe('task capabilities', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await seedSample(t.db);
  });
  afterAll(async () => t.close());
  beforeEach(async () => t.db.task.deleteMany());

  describe('create_task', () => {
    it('resolves 田中太郎 by full name and stores a date-only due at 23:59:59 Tokyo time', async () => {
      const ctx = await toolContext(t.db, 'suzuki-kenji');
      const r = await exec().run(
        'create_task',
        { assignee: '田中太郎', title: '見積書を送る', due: '2026-11-25' },
        ctx,
      );
      expect(r).toMatchObject({
        status: 'ok',
        output: {
          title: '見積書を送る',
          assignee: { memberId: 'tanaka-taro', name: '田中太郎' },
          due: '2026-11-25',
          chatwork: 'skipped',
        },
      });
      const rows = await t.db.task.findMany();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        orgId: 'acme',
        platform: 'console',
        roomId: 'console-general',
        assigneeMemberId: 'tanaka-taro',
        createdByMemberId: 'suzuki-kenji',
        status: 'open',
        idempotencyKey: ctx.idempotencyKey,
        chatworkTaskId: null,
      });
      expect(rows[0]!.dueAt!.toISOString()).toBe('2026-11-25T14:59:59.000Z');
    });

    it('accepts a member id, a date-time with offset, and no due date', async () => {
      const a = await exec().run(
        'create_task',
        { assignee: 'ito-yui', title: 'A', due: '2026-11-25T15:00:00+09:00' },
        await toolContext(t.db, 'suzuki-kenji'),
      );
      expect(a).toMatchObject({
        status: 'ok',
        output: { assignee: { memberId: 'ito-yui' }, due: '2026-11-25T15:00:00+09:00' },
      });
      const b = await exec().run(
        'create_task',
        { assignee: 'ito-yui', title: 'B' },
        await toolContext(t.db, 'suzuki-kenji'),
      );
      expect(b).toMatchObject({ status: 'ok', output: { due: null } });
    });

    it('asks which 田中 is meant for 田中さん and creates nothing', async () => {
      const r = await exec().run(
        'create_task',
        { assignee: '田中さん', title: '資料送付' },
        await toolContext(t.db, 'suzuki-kenji'),
      );
      expect(r).toMatchObject({
        status: 'clarify',
        question: '田中さんが2人います。どちらの方ですか？',
        options: ['田中花子（大阪営業課）', '田中太郎（東京営業課）'],
      });
      if (r.status === 'clarify') expect(r.questionEn).toContain('田中さん');
      expect(await t.db.task.count()).toBe(0);
    });

    it('refuses an unknown person with a message for the model', async () => {
      const r = await exec().run(
        'create_task',
        { assignee: '木村さん', title: 'x' },
        await toolContext(t.db, 'suzuki-kenji'),
      );
      expect(r).toMatchObject({ status: 'error', code: 'UNKNOWN_PERSON' });
      if (r.status === 'error')
        expect(r.modelMessage).toBe('No member matches "木村さん". Ask the person who is meant.');
      expect(await t.db.task.count()).toBe(0);
    });

    it('refuses a due date that is not ISO', async () => {
      const r = await exec().run(
        'create_task',
        { assignee: '田中太郎', title: 'x', due: '来週のどこか' },
        await toolContext(t.db, 'suzuki-kenji'),
      );
      expect(r).toMatchObject({ status: 'error', code: 'INVALID_DATE' });
      const bad = await exec().run(
        'create_task',
        { assignee: '田中太郎', title: 'x', due: '2026-02-30' },
        await toolContext(t.db, 'suzuki-kenji'),
      );
      expect(bad).toMatchObject({ status: 'error', code: 'INVALID_DATE' });
      expect(await t.db.task.count()).toBe(0);
    });

    it('rejects an empty title through the input schema', async () => {
      const r = await exec().run(
        'create_task',
        { assignee: '田中太郎', title: '   ' },
        await toolContext(t.db, 'suzuki-kenji'),
      );
      expect(r).toMatchObject({ status: 'error', code: 'INVALID_INPUT' });
    });

    it('is idempotent per key: a retried turn returns the first task and creates one row (and one ChatWork task)', async () => {
      const key = newKey();
      const cw = fakeChatwork();
      const params = { assignee: '田中太郎', title: '見積書を送る', due: '2026-11-25' };
      const first = await exec().run(
        'create_task',
        params,
        await toolContext(t.db, 'suzuki-kenji', { key, platform: 'chatwork', services: { chatwork: cw.client } }),
      );
      const again = await exec().run(
        'create_task',
        params,
        await toolContext(t.db, 'suzuki-kenji', { key, platform: 'chatwork', services: { chatwork: cw.client } }),
      );
      expect(first.status).toBe('ok');
      expect(again).toMatchObject({ status: 'ok', output: (first as { output: unknown }).output });
      expect(await t.db.task.count()).toBe(1);
      expect(cw.created).toHaveLength(1);
    });

    it('also creates the ChatWork task in a ChatWork room (date-only → limit_type date)', async () => {
      const cw = fakeChatwork();
      const r = await exec().run(
        'create_task',
        { assignee: '田中太郎', title: '見積書を送る', due: '2026-11-25', note: 'A社向け' },
        await toolContext(t.db, 'suzuki-kenji', { platform: 'chatwork', services: { chatwork: cw.client } }),
      );
      expect(r).toMatchObject({ status: 'ok', output: { chatwork: 'created' } });
      expect(cw.created).toEqual([
        [
          '5001',
          {
            body: '見積書を送る\nA社向け',
            toIds: ['1004'],
            limit: unix('2026-11-25T23:59:59+09:00'),
            limitType: 'date',
          },
        ],
      ]);
      const row = await t.db.task.findFirstOrThrow();
      expect(row.chatworkTaskId).toBe('9001');
    });

    it('uses limit_type time for a date-time, none without a due date', async () => {
      const cw = fakeChatwork();
      const ctx = async () =>
        toolContext(t.db, 'suzuki-kenji', { platform: 'chatwork', services: { chatwork: cw.client } });
      await exec().run(
        'create_task',
        { assignee: '田中花子', title: 'T', due: '2026-11-25T15:30:00+09:00' },
        await ctx(),
      );
      await exec().run('create_task', { assignee: '田中花子', title: 'N' }, await ctx());
      expect(cw.created[0]![1]).toEqual({
        body: 'T',
        toIds: ['1005'],
        limit: unix('2026-11-25T06:30:00Z'),
        limitType: 'time',
      });
      expect(cw.created[1]![1]).toEqual({ body: 'N', toIds: ['1005'], limitType: 'none' });
    });

    it('skips ChatWork for assignees without a ChatWork account and outside ChatWork rooms', async () => {
      const cw = fakeChatwork();
      const r = await exec().run(
        'create_task',
        { assignee: '高橋亮', title: 'x' },
        await toolContext(t.db, 'suzuki-kenji', { platform: 'chatwork', services: { chatwork: cw.client } }),
      );
      expect(r).toMatchObject({ status: 'ok', output: { chatwork: 'skipped' } });
      const c = await exec().run(
        'create_task',
        { assignee: '田中太郎', title: 'y' },
        await toolContext(t.db, 'suzuki-kenji', { platform: 'console', services: { chatwork: cw.client } }),
      );
      expect(c).toMatchObject({ status: 'ok', output: { chatwork: 'skipped' } });
      expect(cw.created).toHaveLength(0);
    });

    it('keeps the local task when ChatWork fails', async () => {
      const cw = fakeChatwork({ fail: true });
      const r = await exec().run(
        'create_task',
        { assignee: '田中太郎', title: '見積書' },
        await toolContext(t.db, 'suzuki-kenji', { platform: 'chatwork', services: { chatwork: cw.client } }),
      );
      expect(r).toMatchObject({ status: 'ok', output: { chatwork: 'failed', title: '見積書' } });
      const row = await t.db.task.findFirstOrThrow();
      expect(row).toMatchObject({ title: '見積書', chatworkTaskId: null, status: 'open' });
    });

    describe('with the real ChatworkClient', () => {
      const client = () =>
        new ChatworkClient({
          apiToken: 'cw-test-token-0123456789',
          baseUrl: 'https://api.chatwork.test/v2',
          logger: silentLogger(),
          maxRetries: 0,
          sleep: async () => undefined,
        });

      it('posts to_ids, limit (unix seconds) and limit_type as form fields', async () => {
        let form: Record<string, string> = {};
        const api = nock('https://api.chatwork.test', { reqheaders: { 'x-chatworktoken': 'cw-test-token-0123456789' } })
          .post('/v2/rooms/5001/tasks')
          .reply(200, (_uri, body) => {
            form = Object.fromEntries(new URLSearchParams(String(body)));
            return { task_ids: [4242] };
          });
        const r = await exec().run(
          'create_task',
          { assignee: '田中太郎', title: '見積書を送る', due: '2026-11-25T15:00:00+09:00' },
          await toolContext(t.db, 'suzuki-kenji', { platform: 'chatwork', services: { chatwork: client() } }),
        );
        expect(r).toMatchObject({ status: 'ok', output: { chatwork: 'created' } });
        expect(api.isDone()).toBe(true);
        expect(form).toEqual({
          body: '見積書を送る',
          to_ids: '1004',
          limit: String(unix('2026-11-25T06:00:00Z')),
          limit_type: 'time',
        });
        expect((await t.db.task.findFirstOrThrow()).chatworkTaskId).toBe('4242');
      });

      it('tolerates an API error', async () => {
        nock('https://api.chatwork.test')
          .post('/v2/rooms/5001/tasks')
          .reply(400, { errors: ['Invalid to_ids'] });
        const r = await exec().run(
          'create_task',
          { assignee: '田中太郎', title: 'x', due: '2026-11-25' },
          await toolContext(t.db, 'suzuki-kenji', { platform: 'chatwork', services: { chatwork: client() } }),
        );
        expect(r).toMatchObject({ status: 'ok', output: { chatwork: 'failed' } });
        expect(await t.db.task.count()).toBe(1);
      });

      it('a ChatWork task post answered 502 is not repeated, reported as unknown; a retry posts nothing', async () => {
        const api = nock('https://api.chatwork.test').post('/v2/rooms/5001/tasks').once().reply(502);
        const ctx = await toolContext(t.db, 'suzuki-kenji', { platform: 'chatwork', services: { chatwork: client() } });
        const r = await exec().run('create_task', { assignee: '田中太郎', title: '発注書' }, ctx);
        expect(r).toMatchObject({ status: 'ok', output: { chatwork: 'unknown' } });
        expect(api.isDone()).toBe(true);
        // The same origin again (the turn retried): the local task is returned, ChatWork is not asked again.
        const retried = new ToolExecutor(new ToolRegistry(handlers));
        const again = await retried.run('create_task', { assignee: '田中太郎', title: '発注書を作る' }, ctx);
        expect(again).toMatchObject({ status: 'ok', output: { title: '発注書' } });
        expect(await t.db.task.count()).toBe(1);
      });
    });
  });

  describe('complete_task', () => {
    async function taskFor(
      assignee: string,
      creator: string | null,
      extra: { chatworkTaskId?: string; platform?: string; roomId?: string } = {},
    ) {
      return t.db.task.create({
        data: { orgId: 'acme', title: '見積書', assigneeMemberId: assignee, createdByMemberId: creator, ...extra },
      });
    }

    it('lets the assignee complete it', async () => {
      const task = await taskFor('tanaka-taro', 'suzuki-kenji');
      const r = await exec().run('complete_task', { task_id: task.id }, await toolContext(t.db, 'tanaka-taro'));
      expect(r).toMatchObject({
        status: 'ok',
        output: { taskId: task.id, title: '見積書', status: 'done', alreadyDone: false },
      });
      const row = await t.db.task.findUniqueOrThrow({ where: { id: task.id } });
      expect(row.status).toBe('done');
      expect(row.completedAt?.toISOString()).toBe('2026-11-20T01:00:00.000Z');
    });

    it('lets the creator and a level 3+ member complete it, nobody else', async () => {
      const a = await taskFor('tanaka-hanako', 'ito-yui');
      expect(await exec().run('complete_task', { task_id: a.id }, await toolContext(t.db, 'ito-yui'))).toMatchObject({
        status: 'ok',
      });
      const b = await taskFor('tanaka-hanako', 'ito-yui');
      expect(
        await exec().run('complete_task', { task_id: b.id }, await toolContext(t.db, 'tanaka-taro')),
      ).toMatchObject({ status: 'ok' });
      const c = await taskFor('tanaka-hanako', 'suzuki-kenji');
      const denied = await exec().run('complete_task', { task_id: c.id }, await toolContext(t.db, 'watanabe-sho'));
      expect(denied).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
      if (denied.status === 'error') expect(denied.modelMessage).not.toContain('見積書');
      expect((await t.db.task.findUniqueOrThrow({ where: { id: c.id } })).status).toBe('open');
    });

    it('reports an already-done task as ok with alreadyDone', async () => {
      const task = await taskFor('tanaka-taro', null);
      await exec().run('complete_task', { task_id: task.id }, await toolContext(t.db, 'tanaka-taro'));
      const again = await exec().run('complete_task', { task_id: task.id }, await toolContext(t.db, 'tanaka-taro'));
      expect(again).toMatchObject({ status: 'ok', output: { status: 'done', alreadyDone: true } });
    });

    it('refuses unknown ids and unknown senders', async () => {
      expect(
        await exec().run('complete_task', { task_id: 'nope' }, await toolContext(t.db, 'tanaka-taro')),
      ).toMatchObject({ status: 'error', code: 'NOT_FOUND' });
      const task = await taskFor('tanaka-taro', null);
      expect(await exec().run('complete_task', { task_id: task.id }, await toolContext(t.db, null))).toMatchObject({
        status: 'error',
        code: 'NO_MEMBER',
      });
    });

    it('marks the ChatWork task done, and tolerates a ChatWork failure', async () => {
      const cw = fakeChatwork();
      const task = await taskFor('tanaka-taro', null, { chatworkTaskId: '555', platform: 'chatwork', roomId: '5001' });
      const r = await exec().run(
        'complete_task',
        { task_id: task.id },
        await toolContext(t.db, 'tanaka-taro', { platform: 'chatwork', services: { chatwork: cw.client } }),
      );
      expect(r).toMatchObject({ status: 'ok', output: { chatwork: 'updated' } });
      expect(cw.updated).toEqual([['5001', '555', 'done']]);

      const broken = fakeChatwork({ fail: true });
      const task2 = await taskFor('tanaka-taro', null, { chatworkTaskId: '556', platform: 'chatwork', roomId: '5001' });
      const r2 = await exec().run(
        'complete_task',
        { task_id: task2.id },
        await toolContext(t.db, 'tanaka-taro', { platform: 'chatwork', services: { chatwork: broken.client } }),
      );
      expect(r2).toMatchObject({ status: 'ok', output: { status: 'done', chatwork: 'failed' } });
      expect((await t.db.task.findUniqueOrThrow({ where: { id: task2.id } })).status).toBe('done');
    });
  });

  describe('search_tasks', () => {
    beforeEach(async () => {
      const base = { orgId: 'acme', createdByMemberId: 'suzuki-kenji' };
      await t.db.task.createMany({
        data: [
          { ...base, title: '期限なしの作業', assigneeMemberId: 'tanaka-taro' },
          { ...base, title: '見積書を送る', assigneeMemberId: 'tanaka-taro', dueAt: new Date('2026-11-25T14:59:59Z') },
          { ...base, title: '請求書の確認', assigneeMemberId: 'tanaka-taro', dueAt: new Date('2026-11-18T14:59:59Z') },
          {
            ...base,
            title: '完了した見積',
            assigneeMemberId: 'tanaka-taro',
            status: 'done',
            dueAt: new Date('2026-11-10T14:59:59Z'),
          },
          { ...base, title: '花子さんの仕事', assigneeMemberId: 'tanaka-hanako' },
        ],
      });
    });

    it("lists the sender's open tasks due first, with overdue marks", async () => {
      const r = await exec().run('search_tasks', {}, await toolContext(t.db, 'tanaka-taro'));
      expect(r.status).toBe('ok');
      const out = (
        r as {
          output: {
            assignee: unknown;
            tasks: { title: string; due: string | null; overdue: boolean; assignee: string; status: string }[];
            more: boolean;
          };
        }
      ).output;
      expect(out.assignee).toEqual({ memberId: 'tanaka-taro', name: '田中太郎' });
      expect(out.tasks.map((x) => [x.title, x.due, x.overdue])).toEqual([
        ['請求書の確認', '2026-11-18', true],
        ['見積書を送る', '2026-11-25', false],
        ['期限なしの作業', null, false],
      ]);
      expect(out.tasks.every((x) => x.assignee === '田中太郎' && x.status === 'open')).toBe(true);
      expect(out.more).toBe(false);
    });

    it('filters by status, title words and due date', async () => {
      const ctx = async () => toolContext(t.db, 'tanaka-taro');
      const titles = (r: unknown) => (r as { output: { tasks: { title: string }[] } }).output.tasks.map((x) => x.title);
      expect(titles(await exec().run('search_tasks', { status: 'done' }, await ctx()))).toEqual(['完了した見積']);
      expect(titles(await exec().run('search_tasks', { status: 'all', query: '見積' }, await ctx()))).toEqual([
        '完了した見積',
        '見積書を送る',
      ]);
      expect(titles(await exec().run('search_tasks', { due_before: '2026-11-20' }, await ctx()))).toEqual([
        '請求書の確認',
      ]);
      expect(await exec().run('search_tasks', { due_before: 'someday' }, await ctx())).toMatchObject({
        status: 'error',
        code: 'INVALID_DATE',
      });
    });

    it("searches another member's tasks by name, and asks when the name is ambiguous", async () => {
      const r = await exec().run('search_tasks', { assignee: '花子さん' }, await toolContext(t.db, 'suzuki-kenji'));
      expect(r).toMatchObject({
        status: 'ok',
        output: { assignee: { memberId: 'tanaka-hanako' }, tasks: [{ title: '花子さんの仕事' }] },
      });
      const amb = await exec().run('search_tasks', { assignee: '田中さん' }, await toolContext(t.db, 'suzuki-kenji'));
      expect(amb).toMatchObject({ status: 'clarify', options: ['田中花子（大阪営業課）', '田中太郎（東京営業課）'] });
    });

    it('returns at most 20 tasks and says there are more', async () => {
      await t.db.task.createMany({
        data: Array.from({ length: 25 }, (_, i) => ({ orgId: 'acme', title: `作業${i}`, assigneeMemberId: 'ito-yui' })),
      });
      const r = await exec().run('search_tasks', {}, await toolContext(t.db, 'ito-yui'));
      expect(r).toMatchObject({ status: 'ok', output: { more: true } });
      expect((r as { output: { tasks: unknown[] } }).output.tasks).toHaveLength(20);
    });
  });
});
