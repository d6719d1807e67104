import { breakGoalIntoTasks, reportGoalProgress, startGoalSetting, viewGoals } from '../../handlers/goals';
import type { Db } from '../../src/db/prisma';
import { ToolExecutor } from '../../src/tools/executor';
import { ToolRegistry } from '../../src/tools/registry';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { newKey, seedSample, toolContext } from './tool-context';

interface GoalOut {
  id: string;
  title: string;
  status: string;
  targetDate: string | null;
  progressNote: string;
  doneTasks: number;
  totalTasks: number;
  completionRate: number | null;
}

describe('goal capabilities', () => {
  let t: TestDatabase;
  let db: Db;
  const exec = () =>
    new ToolExecutor(new ToolRegistry([startGoalSetting, reportGoalProgress, viewGoals, breakGoalIntoTasks]));
  const run = async (member: string, tool: string, params: unknown, opts: { key?: string } = {}) =>
    exec().run(tool, params, await toolContext(db, member, opts));
  const ok = async (member: string, tool: string, params: unknown, opts: { key?: string } = {}) => {
    const r = await run(member, tool, params, opts);
    if (r.status !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(r)}`);
    return r.output as Record<string, unknown>;
  };
  const start = async (member: string, title: string, extra: Record<string, unknown> = {}) =>
    (await ok(member, 'start_goal_setting', { title, ...extra })).goal as GoalOut;

  beforeAll(async () => {
    t = await createTestDatabase();
    db = t.db;
    await seedSample(db);
  });
  afterAll(async () => {
    await t.close();
  });

  it('declares its meta', () => {
    expect(startGoalSetting).toMatchObject({
      effects: ['db.goal_create'],
      risk: 'none',
      requiredLevel: 1,
      paramRoles: { target_date: 'date' },
    });
    expect(reportGoalProgress).toMatchObject({ effects: ['db.goal_update'], requiredLevel: 1 });
    expect(viewGoals).toMatchObject({ effects: [], requiredLevel: 1, paramRoles: { member: 'target_user' } });
    expect(breakGoalIntoTasks).toMatchObject({ effects: ['db.task_create'], risk: 'none', requiredLevel: 1 });
  });

  describe('start_goal_setting', () => {
    it('creates an active goal and suggests refining questions in Japanese', async () => {
      const out = await ok('ito-yui', 'start_goal_setting', { title: 'AWS資格を取る', target_date: '2026-12-31' });
      expect(out.goal).toMatchObject({
        title: 'AWS資格を取る',
        status: 'active',
        targetDate: '2026-12-31',
        completionRate: null,
        totalTasks: 0,
      });
      const questions = out.nextQuestions as string[];
      expect(questions.length).toBeGreaterThanOrEqual(3);
      expect(questions.join('')).toMatch(/なぜ/);
      expect(questions.join('')).not.toMatch(/いつまで/);
      const row = await db.goal.findUniqueOrThrow({ where: { id: (out.goal as GoalOut).id } });
      expect(row).toMatchObject({ orgId: 'acme', memberId: 'ito-yui', status: 'active' });
      expect(row.targetDate!.toISOString()).toBe('2026-12-31T14:59:59.000Z');
    });

    it('asks for a target date when none is given, and reads relative dates', async () => {
      const out = await ok('ito-yui', 'start_goal_setting', { title: '読書' });
      expect((out.nextQuestions as string[]).join('')).toMatch(/いつまで/);
      expect((await start('ito-yui', '月末までの目標', { target_date: '月末' })).targetDate).toBe('2026-11-30');
      expect(await run('ito-yui', 'start_goal_setting', { title: 'x', target_date: 'そのうち' })).toMatchObject({
        status: 'error',
        code: 'INVALID_DATE',
      });
    });

    it('is idempotent per idempotency key', async () => {
      const key = newKey();
      const a = await ok('watanabe-sho', 'start_goal_setting', { title: '営業資料を作る' }, { key });
      const b = await ok('watanabe-sho', 'start_goal_setting', { title: '営業資料を作る' }, { key });
      expect(b.alreadyCreated).toBe(true);
      expect((b.goal as GoalOut).id).toBe((a.goal as GoalOut).id);
      expect(await db.goal.count({ where: { idempotencyKey: key } })).toBe(1);
    });
  });

  describe('break_goal_into_tasks and completion rate', () => {
    let goal: GoalOut;
    beforeAll(async () => {
      goal = await start('tanaka-taro', '新規顧客10社');
    });

    it('creates tasks for the owner linked to the goal, idempotently', async () => {
      const key = newKey();
      const params = {
        goal_id: goal.id,
        tasks: [
          { title: 'リスト作成', due: '2026-11-27' },
          { title: '初回訪問' },
          { title: '提案書', due: '来週金曜' },
        ],
      };
      const out = await ok('tanaka-taro', 'break_goal_into_tasks', params, { key });
      expect(out).toMatchObject({ created: 3, goal: { totalTasks: 3, doneTasks: 0, completionRate: 0 } });
      expect(out.tasks).toEqual([
        expect.objectContaining({ title: 'リスト作成', due: '2026-11-27' }),
        expect.objectContaining({ title: '初回訪問', due: null }),
        expect.objectContaining({ title: '提案書', due: '2026-11-27' }),
      ]);
      const rows = await db.task.findMany({ where: { goalId: goal.id } });
      expect(rows).toHaveLength(3);
      expect(rows.every((r) => r.assigneeMemberId === 'tanaka-taro' && r.status === 'open' && r.orgId === 'acme')).toBe(
        true,
      );
      const retry = await ok('tanaka-taro', 'break_goal_into_tasks', params, { key });
      expect(retry.created).toBe(0);
      expect((retry.tasks as { id: string }[]).map((x) => x.id)).toEqual(
        (out.tasks as { id: string }[]).map((x) => x.id),
      );
      expect(await db.task.count({ where: { goalId: goal.id } })).toBe(3);
    });

    it('computes done / all linked tasks, ignoring other goals', async () => {
      const other = await start('tanaka-taro', '別の目標');
      await ok('tanaka-taro', 'break_goal_into_tasks', { goal_id: other.id, tasks: [{ title: '別タスク' }] });
      await db.task.updateMany({ where: { goalId: other.id }, data: { status: 'done' } });
      const first = await db.task.findFirstOrThrow({ where: { goalId: goal.id, title: 'リスト作成' } });
      await db.task.update({ where: { id: first.id }, data: { status: 'done' } });
      const goals = (await ok('tanaka-taro', 'view_goals', {})).goals as GoalOut[];
      expect(goals.find((g) => g.id === goal.id)).toMatchObject({ doneTasks: 1, totalTasks: 3, completionRate: 0.333 });
      expect(goals.find((g) => g.id === other.id)).toMatchObject({ doneTasks: 1, totalTasks: 1, completionRate: 1 });
    });

    it("refuses other people's goals, bad dates and too many tasks without creating anything", async () => {
      const before = await db.task.count();
      expect(
        await run('watanabe-sho', 'break_goal_into_tasks', { goal_id: goal.id, tasks: [{ title: 'x' }] }),
      ).toMatchObject({ status: 'error', code: 'GOAL_NOT_FOUND' });
      expect(
        await run('tanaka-taro', 'break_goal_into_tasks', {
          goal_id: goal.id,
          tasks: [{ title: 'a' }, { title: 'b', due: 'いつか' }],
        }),
      ).toMatchObject({ status: 'error', code: 'INVALID_DATE' });
      const eleven = Array.from({ length: 11 }, (_, i) => ({ title: `t${i}` }));
      expect(await run('tanaka-taro', 'break_goal_into_tasks', { goal_id: goal.id, tasks: eleven })).toMatchObject({
        status: 'error',
        code: 'INVALID_INPUT',
      });
      expect(await db.task.count()).toBe(before);
    });
  });

  describe('report_goal_progress', () => {
    it('records a dated note on an own goal only', async () => {
      const goal = await start('ito-yui', '進捗テスト');
      const out = await ok('ito-yui', 'report_goal_progress', { goal_id: goal.id, note: '教材を半分終えた' });
      expect((out.goal as GoalOut).progressNote).toBe('2026-11-20: 教材を半分終えた');
      expect(await run('takahashi-ryo', 'report_goal_progress', { goal_id: goal.id, note: '横取り' })).toMatchObject({
        status: 'error',
        code: 'GOAL_NOT_FOUND',
      });
      expect((await db.goal.findUniqueOrThrow({ where: { id: goal.id } })).progressNote).toBe(
        '2026-11-20: 教材を半分終えた',
      );
    });
  });

  describe('view_goals', () => {
    it('defaults to the sender and hides closed goals unless asked', async () => {
      const closed = await start('watanabe-sho', '終わった目標');
      await db.goal.update({ where: { id: closed.id }, data: { status: 'achieved' } });
      const out = await ok('watanabe-sho', 'view_goals', {});
      expect(out.member).toBe('渡辺翔');
      expect((out.goals as GoalOut[]).map((g) => g.title)).toEqual(['営業資料を作る']);
      const all = await ok('watanabe-sho', 'view_goals', { include_closed: true });
      expect((all.goals as GoalOut[]).map((g) => g.title)).toEqual(['営業資料を作る', '終わった目標']);
    });

    it("shows another member only inside the sender's scope", async () => {
      const seen = await ok('suzuki-kenji', 'view_goals', { member: '田中太郎' });
      expect((seen.goals as GoalOut[]).map((g) => g.title)).toContain('新規顧客10社');
      expect(await run('ito-yui', 'view_goals', { member: '渡辺さん' })).toMatchObject({
        status: 'error',
        code: 'OUT_OF_SCOPE',
      });
    });

    it('asks which one for an ambiguous name', async () => {
      const r = await run('yamada-ichiro', 'view_goals', { member: '田中さん' });
      expect(r.status).toBe('clarify');
      if (r.status === 'clarify') expect(r.options).toHaveLength(2);
    });
  });
});
