/**
 * Task capabilities (R-T4): create (mirrored on ChatWork in ChatWork rooms), complete, search.
 * Assignees are resolved from the organisation directory; ambiguous names ask the person to choose.
 */
import { z } from 'zod';
import { defineTool } from '../src/tools/define-tool';
import { ToolError } from '../src/tools/types';
import { completeChatworkTask, createChatworkTask } from './_chatwork-task';
import { fact, none, showWhen } from './_describe';
import { createOnce, dbOf, memberName, personLabel, requireSender, resolvePersonOrAsk } from './_people';
import { END_OF_DAY, formatDue, isDateOnlyDue, parseWhen, type ParsedWhen } from './_when';

/** Maximum number of tasks one search returns. */
export const SEARCH_LIMIT = 20;

/** Reads a date parameter or refuses it with a message asking for a date. */
function readDate(name: string, value: string, ctx: { timezone: string }): ParsedWhen {
  const parsed = parseWhen(value, ctx.timezone, END_OF_DAY);
  if (!parsed) {
    throw new ToolError(
      `"${name}" must be an ISO date (YYYY-MM-DD) or an ISO date-time with offset; ask the person for the date.`,
      'INVALID_DATE',
    );
  }
  return parsed;
}

const personOut = z.object({ memberId: z.string(), name: z.string() });

/** `create_task`: a task for a member, also created on ChatWork when the turn is in a ChatWork room. */
export const createTask = defineTool({
  name: 'create_task',
  description:
    'Create a task (to-do) for a member, optionally with a deadline; in a ChatWork room it is also created ' +
    'on ChatWork. If several members match the assignee, the person is asked to choose.',
  triggerExamples: [
    '田中さんに明日までに見積書を送るタスクを作って',
    '自分に「議事録を共有」のタスクを追加して',
    '鈴木さんに金曜までの資料レビューを依頼して',
  ],
  effects: ['db.task_create', 'chatwork.task_create'],
  effectKind: 'create_task',
  risk: 'none',
  requiredLevel: 2,
  paramRoles: { assignee: 'assignee', due: 'date', title: 'text' },
  input: z.object({
    assignee: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .describe('Who does the task: name, alias (e.g. 田中さん), member id, or "me".'),
    title: z.string().trim().min(1).max(500).describe('What is to be done, short.'),
    due: z
      .string()
      .trim()
      .max(40)
      .optional()
      .describe('Deadline: YYYY-MM-DD (end of that day) or ISO date-time with offset, e.g. 2026-12-01T15:00:00+09:00.'),
    note: z.string().trim().max(2000).optional().describe('Optional details added to the task body.'),
  }),
  output: z.object({
    taskId: z.string(),
    title: z.string(),
    assignee: personOut,
    due: z.string().nullable(),
    /** `unknown`: ChatWork may or may not have created it (timeout or 5xx); tell the person to check, never retry. */
    chatwork: z.enum(['created', 'skipped', 'failed', 'unknown']),
  }),
  async describe(input, ctx) {
    const due = input.due ? readDate('due', input.due, ctx) : null;
    const person = await resolvePersonOrAsk(ctx, input.assignee);
    const facts = [
      fact(ctx, 'assignee', { ja: '担当', en: 'Assignee' }, personLabel(person.name, person.departmentName)),
      fact(ctx, 'title', { ja: '内容', en: 'Task' }, input.title),
      fact(ctx, 'due', { ja: '期限', en: 'Due' }, due ? showWhen(due, ctx) : none(ctx)),
      ...(input.note ? [fact(ctx, 'note', { ja: 'メモ', en: 'Note' }, input.note)] : []),
    ];
    if (ctx.platform === 'chatwork' && person.accounts.chatwork) {
      const mirrored = ctx.lang === 'en' ? 'also created as a ChatWork task' : 'ChatWork のタスクにも登録します';
      facts.push(fact(ctx, 'chatwork', { ja: 'ChatWork', en: 'ChatWork' }, mirrored));
    }
    return {
      summary: ctx.lang === 'en' ? `Create a task for ${person.name}.` : `${person.name}さんにタスクを作成します。`,
      facts,
    };
  },
  async handler(input, ctx) {
    const db = dbOf(ctx);
    const due = input.due ? readDate('due', input.due, ctx) : null;
    const key = ctx.idempotencyKey || null;
    const find = () => (key ? db.task.findUnique({ where: { idempotencyKey: key } }) : Promise.resolve(null));
    const earlier = await find();
    if (earlier) {
      const name = await memberName(db, earlier.orgId, earlier.assigneeMemberId);
      return {
        taskId: earlier.id,
        title: earlier.title,
        assignee: { memberId: earlier.assigneeMemberId, name },
        due: formatDue(earlier.dueAt, ctx.timezone),
        chatwork: earlier.chatworkTaskId ? ('created' as const) : ('skipped' as const),
      };
    }
    const person = await resolvePersonOrAsk(ctx, input.assignee);
    const { row, created } = await createOnce(
      find,
      () =>
        db.task.create({
          data: {
            orgId: ctx.orgId,
            platform: ctx.platform,
            roomId: ctx.roomId,
            title: input.title,
            assigneeMemberId: person.memberId,
            createdByMemberId: ctx.member?.id ?? null,
            dueAt: due?.at ?? null,
            idempotencyKey: key,
          },
        }),
      { foundNothing: true },
    );
    let chatwork: 'created' | 'skipped' | 'failed' | 'unknown' = row.chatworkTaskId ? 'created' : 'skipped';
    if (created) {
      const cw = await createChatworkTask(ctx, {
        title: input.title,
        note: input.note,
        accountId: person.accounts.chatwork,
        dueAt: due?.at ?? null,
        dateOnly: due?.dateOnly ?? false,
      });
      if (cw.taskId) await db.task.update({ where: { id: row.id }, data: { chatworkTaskId: cw.taskId } });
      chatwork = cw.sync;
    }
    return {
      taskId: row.id,
      title: row.title,
      assignee: { memberId: person.memberId, name: person.name },
      due: formatDue(row.dueAt, ctx.timezone),
      chatwork,
    };
  },
});

/** `complete_task`: marks a task done (assignee, creator, or level 3+ only). */
export const completeTask = defineTool({
  name: 'complete_task',
  description:
    'Mark a task done by its id (from search_tasks or the open tasks in the context); a ChatWork task ' +
    'is marked done too. Only its assignee, its creator or a manager (level 3+) may.',
  triggerExamples: ['見積書のタスク、終わったよ', '議事録共有のタスクを完了にして'],
  effects: ['db.task_update'],
  effectKind: 'complete',
  risk: 'none',
  requiredLevel: 2,
  paramRoles: { task_id: 'task' },
  input: z.object({ task_id: z.string().trim().min(1).max(100).describe('The task id.') }),
  output: z.object({
    taskId: z.string(),
    title: z.string(),
    status: z.literal('done'),
    alreadyDone: z.boolean(),
    chatwork: z.enum(['updated', 'skipped', 'failed']),
  }),
  async describe(input, ctx) {
    const db = dbOf(ctx);
    const task = await db.task.findFirst({ where: { id: input.task_id, orgId: ctx.orgId } });
    if (!task) throw new ToolError(`No task with id "${input.task_id}" exists.`, 'NOT_FOUND');
    const facts = [
      fact(ctx, 'title', { ja: '内容', en: 'Task' }, task.title),
      fact(ctx, 'assignee', { ja: '担当', en: 'Assignee' }, await memberName(db, task.orgId, task.assigneeMemberId)),
      fact(
        ctx,
        'due',
        { ja: '期限', en: 'Due' },
        task.dueAt ? showWhen({ at: task.dueAt, dateOnly: isDateOnlyDue(task.dueAt, ctx.timezone) }, ctx) : none(ctx),
      ),
    ];
    const summary =
      ctx.lang === 'en' ? `Mark the task "${task.title}" as done.` : `タスク「${task.title}」を完了にします。`;
    return { summary, facts };
  },
  async handler(input, ctx) {
    const sender = requireSender(ctx);
    const db = dbOf(ctx);
    const task = await db.task.findFirst({ where: { id: input.task_id, orgId: ctx.orgId } });
    if (!task) throw new ToolError(`No task with id "${input.task_id}" exists.`, 'NOT_FOUND');
    const allowed = task.assigneeMemberId === sender.id || task.createdByMemberId === sender.id || sender.level >= 3;
    if (!allowed)
      throw new ToolError('Only the assignee, the creator or a manager can complete this task.', 'FORBIDDEN');
    if (task.status === 'done')
      return {
        taskId: task.id,
        title: task.title,
        status: 'done' as const,
        alreadyDone: true,
        chatwork: 'skipped' as const,
      };
    const { count } = await db.task.updateMany({
      where: { id: task.id, status: 'open' },
      data: { status: 'done', completedAt: ctx.now() },
    });
    if (count === 0)
      return {
        taskId: task.id,
        title: task.title,
        status: 'done' as const,
        alreadyDone: true,
        chatwork: 'skipped' as const,
      };
    const sync = await completeChatworkTask(ctx, task);
    return { taskId: task.id, title: task.title, status: 'done' as const, alreadyDone: false, chatwork: sync };
  },
});

/** `search_tasks`: a member's tasks (default the sender), due first. */
export const searchTasks = defineTool({
  name: 'search_tasks',
  description:
    `List a member's tasks (default: the sender) by deadline, at most ${SEARCH_LIMIT}; filter by status ` +
    `(default open), words in the title and deadline.`,
  triggerExamples: ['私のタスクを教えて', '田中太郎さんの未完了タスクは？', '今週締切のタスクある？'],
  effects: [],
  risk: 'none',
  requiredLevel: 1,
  paramRoles: { assignee: 'target_user' },
  input: z.object({
    assignee: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe('Whose tasks: name, alias, member id or "me". Omit for the sender.'),
    status: z.enum(['open', 'done', 'all']).default('open'),
    query: z.string().trim().max(100).optional().describe('Words that appear in the task title.'),
    due_before: z.string().trim().max(40).optional().describe('Only tasks due on or before this date (YYYY-MM-DD).'),
  }),
  output: z.object({
    assignee: personOut,
    tasks: z.array(
      z.object({
        taskId: z.string(),
        title: z.string(),
        assignee: z.string(),
        due: z.string().nullable(),
        status: z.string(),
        overdue: z.boolean(),
      }),
    ),
    more: z.boolean(),
  }),
  async handler(input, ctx) {
    const db = dbOf(ctx);
    const who = input.assignee
      ? await resolvePersonOrAsk(ctx, input.assignee)
      : { memberId: requireSender(ctx).id, name: requireSender(ctx).name };
    const before = input.due_before ? readDate('due_before', input.due_before, ctx) : null;
    const rows = await db.task.findMany({
      where: {
        orgId: ctx.orgId,
        assigneeMemberId: who.memberId,
        ...(input.status === 'all' ? {} : { status: input.status }),
        ...(input.query ? { title: { contains: input.query, mode: 'insensitive' as const } } : {}),
        ...(before ? { dueAt: { lte: before.at } } : {}),
      },
      orderBy: [{ dueAt: { sort: 'asc', nulls: 'last' } }, { createdAt: 'asc' }, { id: 'asc' }],
      take: SEARCH_LIMIT + 1,
    });
    const now = ctx.now().getTime();
    return {
      assignee: { memberId: who.memberId, name: who.name },
      tasks: rows.slice(0, SEARCH_LIMIT).map((t) => ({
        taskId: t.id,
        title: t.title,
        assignee: who.name,
        due: formatDue(t.dueAt, ctx.timezone),
        status: t.status,
        overdue: t.status === 'open' && t.dueAt !== null && t.dueAt.getTime() < now,
      })),
      more: rows.length > SEARCH_LIMIT,
    };
  },
});
