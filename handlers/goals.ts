/**
 * Goal capabilities (R-T4, seed 004): start a goal, report progress, view goals with their completion
 * rate (done tasks / tasks linked by `Task.goalId`, computed on read) and break a goal into tasks.
 * Members change only their own goals; viewing someone else's needs them in the sender's scope.
 */
import { z } from 'zod';
import { isDepartmentVisible, SCOPE_FIELDS, visibleDepartments } from '../src/authorization/scope';
import { goalCompletions, localDate } from '../src/context/sources/goals.source';
import type { Db } from '../src/db/prisma';
import type { Goal } from '../src/generated/prisma/client';
import { defineTool } from '../src/tools/define-tool';
import { ToolError, type ToolContext } from '../src/tools/types';
import { parseDateParam } from './_goal-dates';
import { fact, none, showWhen } from './_describe';
import { formatDue } from './_when';
import { createOnce, dbOf, requireSender, resolvePersonOrAsk, type PeopleContext } from './_people';
import { insertTasks } from './_task-store';

const goalView = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  status: z.string(),
  targetDate: z.string().nullable(),
  progressNote: z.string(),
  doneTasks: z.number().int(),
  totalTasks: z.number().int(),
  completionRate: z.number().nullable(),
});

async function viewOf(db: Db, goal: Goal, ctx: ToolContext): Promise<z.input<typeof goalView>> {
  const c = (await goalCompletions(db, ctx.orgId, [goal.id])).get(goal.id)!;
  return {
    id: goal.id,
    title: goal.title,
    description: goal.description,
    status: goal.status,
    targetDate: goal.targetDate ? localDate(goal.targetDate, ctx.timezone) : null,
    progressNote: goal.progressNote,
    ...c,
  };
}

/** The sender's own goal with this id, or a ToolError (other people's goals look the same as missing ones). */
async function ownGoal(ctx: PeopleContext, goalId: string): Promise<Goal> {
  const sender = requireSender(ctx);
  const goal = await dbOf(ctx).goal.findFirst({ where: { id: goalId, orgId: ctx.orgId, memberId: sender.id } });
  if (!goal) throw new ToolError('No goal of yours has that id.', 'GOAL_NOT_FOUND');
  return goal;
}

/** Questions the brain can ask next to refine a new goal (Japanese, user-facing). */
function refiningQuestions(goal: Goal): string[] {
  const q = [
    'この目標はなぜ大切ですか？達成すると何が変わりますか？',
    '達成できたと言えるのはどんな状態ですか？（数字で表せると測りやすいです）',
    '最初の一歩として、今週できることは何ですか？',
  ];
  if (!goal.targetDate) q.push('いつまでに達成したいですか？');
  q.push('具体的なタスク（5〜10個が目安）に分けましょうか？');
  return q;
}

/** `start_goal_setting`: creates an active goal for the sender and suggests refining questions. */
export const startGoalSetting = defineTool({
  name: 'start_goal_setting',
  description:
    'Start a goal for the sender. Returns nextQuestions (Japanese) to ask one at a time (why it ' +
    'matters, what success looks like, the first step); later break_goal_into_tasks.',
  triggerExamples: [
    '今期の目標を立てたい',
    '3月までに新規顧客を10社獲得する目標を設定して',
    'I want to set a goal for this quarter',
  ],
  input: z.object({
    title: z.string().trim().min(1).max(200).describe('Short goal title.'),
    description: z.string().trim().max(2000).optional().describe('Why / what success looks like, if already known.'),
    target_date: z.string().trim().min(1).max(60).optional().describe('Target date, ISO YYYY-MM-DD.'),
  }),
  output: z.object({ goal: goalView, alreadyCreated: z.boolean(), nextQuestions: z.array(z.string()) }),
  effects: ['db.goal_create'],
  effectKind: 'create_goal',
  risk: 'none',
  requiredLevel: 1,
  paramRoles: { target_date: 'date' },
  describe: async (input, ctx) => {
    requireSender(ctx);
    const target = input.target_date ? parseDateParam(input.target_date, ctx.now(), ctx.timezone, 'target_date') : null;
    return {
      summary: ctx.lang === 'en' ? 'Start a new goal for you.' : 'あなたの目標を新しく立てます。',
      done: ctx.lang === 'en' ? 'Started a new goal for you.' : 'あなたの目標を新しく立てました。',
      facts: [
        fact(ctx, 'title', { ja: '目標', en: 'Goal' }, input.title),
        fact(
          ctx,
          'target_date',
          { ja: '期日', en: 'Target date' },
          target ? showWhen({ at: target, dateOnly: true }, ctx) : none(ctx),
        ),
      ],
    };
  },
  handler: async (input, ctx) => {
    const sender = requireSender(ctx);
    const db = dbOf(ctx);
    const targetDate = input.target_date
      ? parseDateParam(input.target_date, ctx.now(), ctx.timezone, 'target_date')
      : null;
    const { row, created } = await createOnce(
      () => db.goal.findUnique({ where: { idempotencyKey: ctx.idempotencyKey } }),
      () =>
        db.goal.create({
          data: {
            orgId: ctx.orgId,
            memberId: sender.id,
            title: input.title,
            description: input.description ?? '',
            targetDate,
            status: 'active',
            idempotencyKey: ctx.idempotencyKey,
          },
        }),
    );
    return { goal: await viewOf(db, row, ctx), alreadyCreated: !created, nextQuestions: refiningQuestions(row) };
  },
});

/** `report_goal_progress`: records the latest progress note on one of the sender's goals. */
export const reportGoalProgress = defineTool({
  name: 'report_goal_progress',
  description:
    "Record a progress update on one of the sender's own goals (replaces the previous note; dated). " +
    'Returns the goal with its completion rate.',
  triggerExamples: [
    '新規顧客の目標、今3社まで来たよ',
    '目標の進捗を報告したい',
    'Progress on my goal: 3 of 10 clients signed',
  ],
  input: z.object({
    goal_id: z.string().trim().min(1).max(100),
    note: z.string().trim().min(1).max(1000).describe('What has happened since the last update.'),
  }),
  output: z.object({ goal: goalView }),
  effects: ['db.goal_update'],
  effectKind: 'update',
  risk: 'none',
  requiredLevel: 1,
  paramRoles: { note: 'text' },
  describe: async (input, ctx) => {
    const goal = await ownGoal(ctx, input.goal_id);
    return {
      summary: ctx.lang === 'en' ? 'Record progress on your goal.' : '目標の進捗を記録します。',
      done: ctx.lang === 'en' ? 'Recorded progress on your goal.' : '目標の進捗を記録しました。',
      facts: [
        fact(ctx, 'goal', { ja: '目標', en: 'Goal' }, goal.title),
        fact(ctx, 'note', { ja: '進捗', en: 'Progress' }, input.note),
      ],
    };
  },
  handler: async (input, ctx) => {
    const goal = await ownGoal(ctx, input.goal_id);
    const progressNote = `${localDate(ctx.now(), ctx.timezone)}: ${input.note}`;
    const updated = await dbOf(ctx).goal.update({ where: { id: goal.id }, data: { progressNote } });
    return { goal: await viewOf(dbOf(ctx), updated, ctx) };
  },
});

/** `view_goals`: a member's goals (default the sender) with completion rates. */
export const viewGoals = defineTool({
  name: 'view_goals',
  description:
    "Show goals with their completion rate (done / linked tasks, null without tasks): the sender's, or " +
    "a member's in the sender's scope. Active goals unless include_closed.",
  triggerExamples: ['私の目標の進み具合は？', '田中さんの目標を見せて', 'How are my goals going?'],
  input: z.object({
    member: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .optional()
      .describe('Whose goals (name or member id); omit for the sender.'),
    include_closed: z.boolean().optional().describe('Also show achieved / abandoned goals.'),
  }),
  output: z.object({ member: z.string(), goals: z.array(goalView) }),
  effects: [],
  risk: 'none',
  requiredLevel: 1,
  paramRoles: { member: 'target_user' },
  handler: async (input, ctx) => {
    const sender = requireSender(ctx);
    const db = dbOf(ctx);
    const person = input.member
      ? await resolvePersonOrAsk(ctx, input.member)
      : { memberId: sender.id, name: sender.name, departmentId: sender.departmentId };
    if (person.memberId !== sender.id) {
      const departments = await db.department.findMany({ where: { orgId: ctx.orgId }, select: SCOPE_FIELDS });
      if (!isDepartmentVisible(visibleDepartments(sender, departments), person.departmentId)) {
        throw new ToolError("That member's goals are outside your scope.", 'OUT_OF_SCOPE');
      }
    }
    const goals = await db.goal.findMany({
      where: {
        orgId: ctx.orgId,
        memberId: person.memberId,
        ...(input.include_closed ? {} : { status: { in: ['active', 'setting'] } }),
      },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: 50,
    });
    const progress = await goalCompletions(
      db,
      ctx.orgId,
      goals.map((g) => g.id),
    );
    return {
      member: person.name,
      goals: goals.map((g) => ({
        id: g.id,
        title: g.title,
        description: g.description,
        status: g.status,
        targetDate: g.targetDate ? localDate(g.targetDate, ctx.timezone) : null,
        progressNote: g.progressNote,
        ...progress.get(g.id)!,
      })),
    };
  },
});

/** `break_goal_into_tasks`: creates up to 10 tasks for one of the sender's goals (idempotent per item). */
export const breakGoalIntoTasks = defineTool({
  name: 'break_goal_into_tasks',
  description:
    "Break one of the sender's own goals into 1..10 concrete tasks (ideally 5..10) for its owner, " +
    'linked so that they count towards its completion rate.',
  triggerExamples: [
    'この目標をタスクに分解して',
    '目標の達成に向けてやることを登録して',
    'Break my goal down into tasks',
  ],
  input: z.object({
    goal_id: z.string().trim().min(1).max(100),
    tasks: z
      .array(
        z.object({
          title: z.string().trim().min(1).max(200),
          due: z.string().trim().min(1).max(60).optional().describe('Due date, ISO YYYY-MM-DD.'),
        }),
      )
      .min(1)
      .max(10),
  }),
  output: z.object({
    goal: goalView,
    created: z.number().int(),
    tasks: z.array(z.object({ id: z.string(), title: z.string(), due: z.string().nullable() })),
  }),
  effects: ['db.task_create'],
  effectKind: 'create_task',
  risk: 'none',
  requiredLevel: 1,
  describe: async (input, ctx) => {
    const goal = await ownGoal(ctx, input.goal_id);
    const en = ctx.lang === 'en';
    const items = input.tasks.map((t, i) => {
      const due = t.due ? parseDateParam(t.due, ctx.now(), ctx.timezone, `tasks[${i}].due`) : null;
      return `${t.title}${due ? `（${showWhen({ at: due, dateOnly: true }, ctx)}）` : ''}`;
    });
    return {
      summary: en ? `Create ${items.length} task(s) for your goal.` : `目標のタスクを${items.length}件作成します。`,
      done: en ? `Created ${items.length} task(s) for your goal.` : `目標のタスクを${items.length}件作成しました。`,
      facts: [
        fact(ctx, 'goal', { ja: '目標', en: 'Goal' }, goal.title),
        fact(ctx, 'tasks', { ja: 'タスク', en: 'Tasks' }, items),
      ],
    };
  },
  handler: async (input, ctx) => {
    const sender = requireSender(ctx);
    const goal = await ownGoal(ctx, input.goal_id);
    const db = dbOf(ctx);
    const keys = input.tasks.map((_, i) => `${ctx.idempotencyKey}#${i}`);
    const data = input.tasks.map((t, i) => ({
      orgId: ctx.orgId,
      platform: ctx.platform,
      roomId: ctx.roomId,
      title: t.title,
      assigneeMemberId: goal.memberId,
      createdByMemberId: sender.id,
      dueAt: t.due ? parseDateParam(t.due, ctx.now(), ctx.timezone, `tasks[${i}].due`) : null,
      goalId: goal.id,
      idempotencyKey: keys[i]!,
    }));
    const { count, rows } = await insertTasks(db, data);
    const byKey = new Map(rows.map((r) => [r.idempotencyKey, r]));
    const tasks = keys
      .map((k) => byKey.get(k))
      .filter((r) => r !== undefined)
      .map((r) => ({ id: r.id, title: r.title, due: formatDue(r.dueAt, ctx.timezone) }));
    return { goal: await viewOf(db, goal, ctx), created: count, tasks };
  },
});
