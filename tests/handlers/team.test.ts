import { teamOverview } from '../../handlers/team';
import type { Db } from '../../src/db/prisma';
import { ToolExecutor } from '../../src/tools/executor';
import { ToolRegistry } from '../../src/tools/registry';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { NOW, seedSample, toolContext } from './tool-context';

interface Row {
  id: string;
  name: string;
  department: string;
  openTasks: number;
  overdueTasks: number;
  activeGoals: number;
}

describe('team_overview', () => {
  let t: TestDatabase;
  let db: Db;
  const run = async (member: string, params: unknown) =>
    new ToolExecutor(new ToolRegistry([teamOverview])).run('team_overview', params, await toolContext(db, member));
  const ok = async (member: string, params: unknown) => {
    const r = await run(member, params);
    if (r.status !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(r)}`);
    return r.output as {
      department: { id: string; name: string };
      includesSubDepartments: boolean;
      members: Row[];
      totals: Record<string, number>;
    };
  };
  const day = 86_400_000;

  beforeAll(async () => {
    t = await createTestDatabase();
    db = t.db;
    await seedSample(db);
    const task = (assignee: string, status: string, dueAt: Date | null) => ({
      orgId: 'acme',
      title: 't',
      assigneeMemberId: assignee,
      status,
      dueAt,
    });
    await db.task.createMany({
      data: [
        task('tanaka-taro', 'open', new Date(NOW.getTime() - day)),
        task('tanaka-taro', 'open', new Date(NOW.getTime() + day)),
        task('tanaka-taro', 'open', null),
        task('tanaka-taro', 'done', new Date(NOW.getTime() - day)),
        task('watanabe-sho', 'open', new Date(NOW.getTime() - 2 * day)),
        task('tanaka-hanako', 'open', null),
      ],
    });
    await db.goal.createMany({
      data: [
        { orgId: 'acme', memberId: 'watanabe-sho', title: 'g1', status: 'active' },
        { orgId: 'acme', memberId: 'watanabe-sho', title: 'g2', status: 'achieved' },
        { orgId: 'acme', memberId: 'tanaka-taro', title: 'g3', status: 'active' },
      ],
    });
    await db.member.update({
      where: { orgId_id: { orgId: 'acme', id: 'watanabe-sho' } },
      data: { preferences: { drink: 'coffee' } },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('declares level 3, read-only, department as the scoped target', () => {
    expect(teamOverview).toMatchObject({
      effects: [],
      risk: 'none',
      requiredLevel: 3,
      paramRoles: { department: 'target_department' },
    });
  });

  it("shows the sender's department by default with open / overdue task and active goal counts", async () => {
    const out = await ok('tanaka-taro', {});
    expect(out.department).toEqual({ id: 'sales-tokyo', name: '東京営業課' });
    expect(out.includesSubDepartments).toBe(false);
    expect(out.members).toEqual([
      expect.objectContaining({ id: 'tanaka-taro', openTasks: 3, overdueTasks: 1, activeGoals: 1 }),
      expect.objectContaining({ id: 'watanabe-sho', openTasks: 1, overdueTasks: 1, activeGoals: 1 }),
    ]);
    expect(out.totals).toEqual({ members: 2, openTasks: 4, overdueTasks: 2 });
  });

  it('never exposes preferences or levels', async () => {
    const out = await ok('yamada-ichiro', { department: 'exec' });
    const text = JSON.stringify(out);
    expect(text).not.toMatch(/coffee|preferences|"level"/);
    for (const m of out.members)
      expect(Object.keys(m).sort()).toEqual([
        'activeGoals',
        'department',
        'id',
        'name',
        'openTasks',
        'overdueTasks',
        'title',
      ]);
  });

  it('includes sub-departments from level 4, and accepts a department name', async () => {
    const out = await ok('suzuki-kenji', { department: '営業部' });
    expect(out.includesSubDepartments).toBe(true);
    expect(out.members.map((m) => m.id).sort()).toEqual([
      'suzuki-kenji',
      'tanaka-hanako',
      'tanaka-taro',
      'watanabe-sho',
    ]);
    expect(out.totals.openTasks).toBe(5);
    const all = await ok('yamada-ichiro', { department: 'exec' });
    expect(all.members).toHaveLength(8);
  });

  it('answers unknown and out-of-scope departments the same way, revealing nothing', async () => {
    const unknown = await run('tanaka-taro', { department: 'no-such-dept' });
    const outside = await run('tanaka-taro', { department: 'dev' });
    const parent = await run('tanaka-taro', { department: 'sales' });
    expect(unknown).toMatchObject({ status: 'error', code: 'UNKNOWN_DEPARTMENT' });
    expect(outside).toMatchObject({ status: 'error', code: 'UNKNOWN_DEPARTMENT' });
    expect(parent).toMatchObject({ status: 'error', code: 'UNKNOWN_DEPARTMENT' });
    expect((outside as { modelMessage: string }).modelMessage).toBe((unknown as { modelMessage: string }).modelMessage);
    expect((outside as { modelMessage: string }).modelMessage).not.toMatch(/開発|dev/);
  });
});
