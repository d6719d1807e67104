/**
 * Team view (R-T4, level 3+): the members of a department in the sender's scope with their open and
 * overdue task counts and active goal counts. Never shows preferences or levels.
 */
import { z } from 'zod';
import { matchDepartments } from '../src/authorization/names';
import { descendants, SCOPE_FIELDS, visibleDepartments } from '../src/authorization/scope';
import { defineTool } from '../src/tools/define-tool';
import { ToolError } from '../src/tools/types';
import { dbOf, requireSender } from './_people';

/** From this level the view also covers the department's descendants. */
const SUBTREE_LEVEL = 4;

/** `team_overview`: workload of a department (default the sender's) for managers. */
export const teamOverview = defineTool({
  name: 'team_overview',
  description:
    "Team overview for managers: a department's members (default the sender's; its name, alias or id) " +
    "with open and overdue tasks and active goals; sub-departments from level 4; sender's scope only.",
  triggerExamples: [
    'チームの状況を教えて',
    '営業部のみんなのタスク状況は？',
    '期限切れのタスクを抱えている人はいる？',
    'How is my team doing?',
  ],
  input: z.object({
    department: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .optional()
      .describe("Department name, alias or id; omit for the sender's own department."),
  }),
  output: z.object({
    department: z.object({ id: z.string(), name: z.string() }),
    includesSubDepartments: z.boolean(),
    members: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        title: z.string().nullable(),
        department: z.string(),
        openTasks: z.number().int(),
        overdueTasks: z.number().int(),
        activeGoals: z.number().int(),
      }),
    ),
    totals: z.object({ members: z.number().int(), openTasks: z.number().int(), overdueTasks: z.number().int() }),
  }),
  effects: [],
  risk: 'none',
  requiredLevel: 3,
  paramRoles: { department: 'target_department' },
  handler: async (input, ctx) => {
    const sender = requireSender(ctx);
    const db = dbOf(ctx);
    const select = { ...SCOPE_FIELDS, name: true, aliases: true };
    const departments = await db.department.findMany({ where: { orgId: ctx.orgId }, select });
    const ref = input.department ?? sender.departmentId;
    if (!ref)
      throw new ToolError('You have no department in the directory; name the department to show.', 'NO_DEPARTMENT');
    const found = matchDepartments(ref, departments);
    const target = found.length === 1 ? found[0] : undefined;
    const visible = visibleDepartments(sender, departments);
    // Unknown and out-of-scope departments get the same answer, so nothing about them leaks.
    if (!target || (visible !== 'ALL' && !visible.has(target.id))) {
      throw new ToolError('No department in your scope matches that.', 'UNKNOWN_DEPARTMENT');
    }
    const subtree = sender.level >= SUBTREE_LEVEL;
    const included = [...(subtree ? descendants(target.id, departments, Infinity) : new Set([target.id]))].filter(
      (id) => visible === 'ALL' || visible.has(id),
    );
    const members = await db.member.findMany({
      where: { orgId: ctx.orgId, active: true, departmentId: { in: included } },
      select: { id: true, name: true, title: true, departmentId: true },
      orderBy: [{ departmentId: 'asc' }, { id: 'asc' }],
    });
    const ids = members.map((m) => m.id);
    const now = ctx.now();
    const [open, overdue, goals] = await Promise.all([
      db.task.groupBy({
        by: ['assigneeMemberId'],
        where: { orgId: ctx.orgId, status: 'open', assigneeMemberId: { in: ids } },
        _count: { _all: true },
      }),
      db.task.groupBy({
        by: ['assigneeMemberId'],
        where: { orgId: ctx.orgId, status: 'open', assigneeMemberId: { in: ids }, dueAt: { lt: now } },
        _count: { _all: true },
      }),
      db.goal.groupBy({
        by: ['memberId'],
        where: { orgId: ctx.orgId, status: 'active', memberId: { in: ids } },
        _count: { _all: true },
      }),
    ]);
    const openBy = new Map(open.map((g) => [g.assigneeMemberId, g._count._all]));
    const overdueBy = new Map(overdue.map((g) => [g.assigneeMemberId, g._count._all]));
    const goalsBy = new Map(goals.map((g) => [g.memberId, g._count._all]));
    const deptName = new Map(departments.map((d) => [d.id, d.name]));
    const rows = members.map((m) => ({
      id: m.id,
      name: m.name,
      title: m.title,
      department: deptName.get(m.departmentId ?? '') ?? '',
      openTasks: openBy.get(m.id) ?? 0,
      overdueTasks: overdueBy.get(m.id) ?? 0,
      activeGoals: goalsBy.get(m.id) ?? 0,
    }));
    return {
      department: { id: target.id, name: target.name },
      includesSubDepartments: subtree,
      members: rows,
      totals: {
        members: rows.length,
        openTasks: rows.reduce((s, r) => s + r.openTasks, 0),
        overdueTasks: rows.reduce((s, r) => s + r.overdueTasks, 0),
      },
    };
  },
});
