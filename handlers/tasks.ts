/**
 * Task capabilities (R-T4): create (mirrored on ChatWork in ChatWork rooms), complete, search, change (due date,
 * title, assignee) and cancel. Assignees are resolved from the organisation directory; ambiguous names ask the
 * person to choose. Rows are written through `_task-store.ts`.
 */
import { z } from 'zod';
import { defineTool } from '../src/tools/define-tool';
import { ToolError } from '../src/tools/types';
import type { DescribeContext, ToolContext } from '../src/tools/types';
import { completeChatworkTask, createChatworkTask, isMirrored, recreateChatworkTask } from './_chatwork-task';
import { fact, none, showWhen } from './_describe';
import {
  dbOf,
  memberName,
  personLabel,
  requireSender,
  resolvePersonOrAsk,
  type PeopleContext,
  type ResolvedPerson,
} from './_people';
import {
  applyChange,
  changeByKey,
  fieldsOf,
  insertTaskOnce,
  linkChatworkTask,
  markTaskDone,
  settleChange,
  taskByKey,
  type ChangeRequest,
  type ChangeSync,
  type Task,
  type TaskChange,
  type TaskFields,
} from './_task-store';
import type { Platform } from '../src/core/chat';
import type { Db } from '../src/db/prisma';
import { taskDueNoticeKey } from '../src/notices/task-change-notice';
import { parseQuietHours, quietUntil } from '../src/scheduler/notices/quiet-hours';
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
    '佐藤さんに来週中に企画書の作成をお願いしておいて',
    '山田さんに議事録の清書を頼んで',
    'この件、中村さんにもやってもらって',
    'Ask Sato to draft the proposal by Friday',
    'Create a task for me: review the contract tomorrow',
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
      done: ctx.lang === 'en' ? `Created a task for ${person.name}.` : `${person.name}さんにタスクを作成しました。`,
      facts,
    };
  },
  async handler(input, ctx) {
    const db = dbOf(ctx);
    const due = input.due ? readDate('due', input.due, ctx) : null;
    const key = ctx.idempotencyKey || null;
    const earlier = await taskByKey(db, key);
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
    const { row, created } = await insertTaskOnce(
      db,
      {
        orgId: ctx.orgId,
        platform: ctx.platform,
        roomId: ctx.roomId,
        title: input.title,
        assigneeMemberId: person.memberId,
        createdByMemberId: ctx.member?.id ?? null,
        dueAt: due?.at ?? null,
        idempotencyKey: key,
      },
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
      if (cw.taskId) await linkChatworkTask(db, row.id, cw.taskId);
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
  triggerExamples: [
    '見積書のタスク、終わったよ',
    '議事録共有のタスクを完了にして',
    'I finished the report task, mark it done',
  ],
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
    const en = ctx.lang === 'en';
    const summary = en ? `Mark the task "${task.title}" as done.` : `タスク「${task.title}」を完了にします。`;
    const done = en ? `Marked the task "${task.title}" as done.` : `タスク「${task.title}」を完了にしました。`;
    return { summary, done, facts };
  },
  async handler(input, ctx) {
    const sender = requireSender(ctx);
    const db = dbOf(ctx);
    const task = await db.task.findFirst({ where: { id: input.task_id, orgId: ctx.orgId } });
    if (!task) throw new ToolError(`No task with id "${input.task_id}" exists.`, 'NOT_FOUND');
    const allowed = task.assigneeMemberId === sender.id || task.createdByMemberId === sender.id || sender.level >= 3;
    if (!allowed)
      throw new ToolError('Only the assignee, the creator or a manager can complete this task.', 'FORBIDDEN');
    if (task.status !== 'open')
      return {
        taskId: task.id,
        title: task.title,
        status: 'done' as const,
        alreadyDone: true,
        chatwork: 'skipped' as const,
      };
    if (!(await markTaskDone(db, task.id, ctx.now())))
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

/** What a change or cancel did on ChatWork (see {@link recreateChatworkTask}). */
const changeSync = z.enum(['recreated', 'completed', 'skipped', 'unreachable', 'failed', 'unknown']);
type ChangeSyncOut = z.infer<typeof changeSync>;

/** What the model tells the person about ChatWork after a change (null: nothing to say). */
function changeNote(sync: ChangeSyncOut, kind: 'change' | 'cancel', oldLeftOpen = false): string | null {
  const cannot = kind === 'cancel' ? 'ChatWork cannot delete or cancel a task, so' : 'ChatWork cannot edit a task, so';
  switch (sync) {
    case 'recreated':
      return oldLeftOpen
        ? `${cannot} a new ChatWork task with the change was created, but the old one could not be marked done: ` +
            'tell the person to mark the old ChatWork task done themselves.'
        : `${cannot} the old ChatWork task was marked done and a new one created with the change: tell the person.`;
    case 'completed':
      return kind === 'cancel'
        ? `${cannot} the ChatWork task was marked done (completed), not deleted: tell the person.`
        : `${cannot} the old ChatWork task was marked done; the new assignee has no ChatWork account, so no new ` +
            'ChatWork task was made: tell the person.';
    case 'unreachable':
      return (
        'The task also exists on ChatWork, which could not be updated from here: ' +
        'tell the person the ChatWork task is unchanged.'
      );
    case 'failed':
      return (
        'The change is saved in Hisho, but the ChatWork task could not be updated (it is unchanged): ' +
        'tell the person.'
      );
    case 'unknown':
      return (
        'The change is saved in Hisho; ChatWork did not answer in time, so a new ChatWork task may or may not exist ' +
        'and the old one was left open: tell the person to check ChatWork. Do not retry.'
      );
    default:
      return null;
  }
}

/** The open task with this id in the organisation, or a ToolError the model can act on. */
async function openTask(ctx: PeopleContext, taskId: string): Promise<Task> {
  const task = await dbOf(ctx).task.findFirst({ where: { id: taskId, orgId: ctx.orgId } });
  if (!task) {
    throw new ToolError(
      `No task with id "${taskId}" exists. Use an id from the open tasks in the context or from search_tasks; ` +
        'if it is unclear which task is meant, ask the person.',
      'NOT_FOUND',
    );
  }
  if (task.status !== 'open') {
    throw new ToolError(`That task is already ${task.status}; it cannot be changed.`, 'TASK_CLOSED');
  }
  return task;
}

/** A stored due date as people read it. */
function dueShown(at: Date | null, ctx: Pick<DescribeContext, 'timezone' | 'lang' | 'now'>): string {
  return at ? showWhen({ at, dateOnly: isDateOnlyDue(at, ctx.timezone) }, ctx) : none(ctx);
}

/** What a change_task call asks for, checked against the task. */
interface ChangePlan {
  after: TaskFields;
  /** The new assignee when it changes. */
  newAssignee: ResolvedPerson | null;
  due: ParsedWhen | null;
  changed: ('due' | 'title' | 'assignee')[];
}

async function planChange(
  ctx: PeopleContext & { timezone: string },
  task: Task,
  input: { due?: string; title?: string; assignee?: string },
): Promise<ChangePlan> {
  if (input.due === undefined && input.title === undefined && input.assignee === undefined) {
    throw new ToolError(
      'Nothing to change: give a new due, title or assignee (ask the person what to change).',
      'NO_CHANGE',
    );
  }
  const due = input.due !== undefined ? readDate('due', input.due, ctx) : null;
  const person = input.assignee !== undefined ? await resolvePersonOrAsk(ctx, input.assignee) : null;
  const after: TaskFields = {
    title: input.title ?? task.title,
    dueAt: due ? due.at : task.dueAt,
    assigneeMemberId: person ? person.memberId : task.assigneeMemberId,
  };
  const changed: ChangePlan['changed'] = [];
  if ((after.dueAt?.getTime() ?? null) !== (task.dueAt?.getTime() ?? null)) changed.push('due');
  if (after.title !== task.title) changed.push('title');
  if (after.assigneeMemberId !== task.assigneeMemberId) changed.push('assignee');
  if (changed.length === 0) {
    throw new ToolError('The task already has these values; nothing changes. Tell the person.', 'NO_CHANGE');
  }
  return { after, newAssignee: changed.includes('assignee') ? person : null, due, changed };
}

/** 「田中太郎さんの『企画書』」 / 「あなたの『企画書』」. */
function whoseTask(ctx: { lang: 'ja' | 'en'; member: ToolContext['member'] }, task: Task, owner: string): string {
  const mine = ctx.member?.id === task.assigneeMemberId;
  if (ctx.lang === 'en') return `${mine ? 'your' : `${owner}'s`} task "${task.title}"`;
  return `${mine ? 'あなた' : `${owner}さん`}の『${task.title}』`;
}

/** The note on a re-created ChatWork task: why it was made again (people see it on ChatWork). */
function recreatedNote(task: Task, plan: ChangePlan, names: { before: string }, ctx: ToolContext): string {
  const ja = { timezone: ctx.timezone, now: ctx.now, lang: 'ja' as const };
  const parts: string[] = [];
  if (plan.changed.includes('due')) parts.push(`期限 ${dueShown(task.dueAt, ja)}→${dueShown(plan.after.dueAt, ja)}`);
  if (plan.changed.includes('assignee')) parts.push(`担当 ${names.before}さんから変更`);
  if (plan.changed.includes('title')) parts.push(`内容「${task.title}」から変更`);
  return `（Hisho: ${parts.join('、')}のため作り直したタスクです。元のタスクは完了にしました）`;
}

const changeOut = z.object({
  taskId: z.string(),
  title: z.string(),
  assignee: personOut,
  due: z.string().nullable(),
  changed: z.array(z.enum(['due', 'title', 'assignee'])),
  before: z.object({ title: z.string(), assignee: z.string(), due: z.string().nullable() }),
  /** What happened on ChatWork; `chatworkNote` says what to tell the person. */
  chatwork: changeSync,
  chatworkNote: z.string().nullable(),
  /** True when an earlier attempt of this call made the change (a retried turn). */
  alreadyChanged: z.boolean(),
  /**
   * Who gave the task and is being told that its due date moved (null: nobody). A reply may say so: a call whose
   * output names whom it notified supports 「伝えておきます」 (src/turn/reply.ts).
   */
  notified: z.string().nullable(),
});

/** A stored ChatWork outcome as the model hears it (`pending`: an attempt was interrupted, so it is unknown). */
function storedSync(stored: string): { sync: ChangeSyncOut; oldLeftOpen: boolean } {
  if (stored === 'recreated_old_open') return { sync: 'recreated', oldLeftOpen: true };
  const known = changeSync.safeParse(stored);
  return { sync: known.success ? known.data : 'unknown', oldLeftOpen: false };
}

/** The output of a recorded change (a retried call gets the first attempt's answer). */
async function changeOutput(ctx: ToolContext, change: TaskChange, alreadyChanged: boolean) {
  const db = dbOf(ctx);
  const before = fieldsOf(change.before);
  const after = fieldsOf(change.after);
  const { sync, oldLeftOpen } = storedSync(change.chatwork);
  const changed: ('due' | 'title' | 'assignee')[] = [];
  if ((after.dueAt?.getTime() ?? null) !== (before.dueAt?.getTime() ?? null)) changed.push('due');
  if (after.title !== before.title) changed.push('title');
  if (after.assigneeMemberId !== before.assigneeMemberId) changed.push('assignee');
  return {
    taskId: change.taskId,
    title: after.title,
    assignee: { memberId: after.assigneeMemberId, name: await memberName(db, ctx.orgId, after.assigneeMemberId) },
    due: formatDue(after.dueAt, ctx.timezone),
    changed,
    before: {
      title: before.title,
      assignee: await memberName(db, ctx.orgId, before.assigneeMemberId),
      due: formatDue(before.dueAt, ctx.timezone),
    },
    chatwork: sync,
    chatworkNote: changeNote(sync, 'change', oldLeftOpen),
    alreadyChanged,
    notified: await giverTold(db, ctx.orgId, change),
  };
}

/** The giver's name when this change's notice to them was enqueued with it. */
async function giverTold(db: Db, orgId: string, change: TaskChange): Promise<string | null> {
  const item = await db.workItem.findUnique({
    where: { dedupeKey: taskDueNoticeKey(change.id) },
    select: { id: true },
  });
  if (!item) return null;
  const task = await db.task.findUnique({ where: { id: change.taskId }, select: { createdByMemberId: true } });
  return task?.createdByMemberId ? memberName(db, orgId, task.createdByMemberId) : null;
}

/**
 * A due date moved by someone other than whoever gave the task (its assignee, usually) is told to the giver: in the
 * room where they gave it (their private room with the bot, or a group room), after their quiet hours.
 */
async function giverNotice(
  ctx: ToolContext,
  task: Task,
  byMemberId: string,
): Promise<Pick<ChangeRequest, 'notifyGiver'>> {
  const giverId = task.createdByMemberId;
  if (!giverId || giverId === byMemberId) return {};
  const db = dbOf(ctx);
  const [giver, org] = await Promise.all([
    db.member.findUnique({ where: { orgId_id: { orgId: ctx.orgId, id: giverId } } }),
    db.organization.findUnique({ where: { id: ctx.orgId } }),
  ]);
  if (!giver?.active) return {};
  const quiet = parseQuietHours(giver.quietHours ?? org?.quietHours);
  const room =
    task.platform && task.roomId
      ? { platform: task.platform as Platform, roomId: task.roomId }
      : { platform: ctx.platform as Platform, roomId: ctx.roomId };
  return { notifyGiver: { ...room, runAt: quietUntil(ctx.now(), quiet, ctx.timezone) } };
}

/** `change_task`: a task's due date, title or assignee (mirrored on ChatWork by completing and re-creating). */
export const changeTask = defineTool({
  name: 'change_task',
  description:
    "Change an open task's due date, title or assignee, by its id (from the context's open tasks, the " +
    'conversation or search_tasks). If it is unclear which task is meant, ask; never guess. ChatWork cannot ' +
    'edit a task: the old ChatWork task is completed and a new one created; say so (chatworkNote).',
  triggerExamples: [
    'その件の期限を金曜に延ばして',
    '田中さんのタスク、担当を佐藤さんに変えて',
    '見積書のタスク、タイトルを「見積書の再送」に直して',
    '資料作成の締切、来週水曜に変更して',
    '今日は無理なので明日に回して',
    'Move the deadline of my slides task to Thursday',
  ],
  effects: ['db.task_update', 'chatwork.task_create', 'chatwork.task_update'],
  effectKind: 'update',
  risk: 'none',
  requiredLevel: 2,
  paramRoles: { task_id: 'task_change', due: 'date', title: 'text', assignee: 'assignee' },
  input: z.object({
    task_id: z.string().trim().min(1).max(100).describe('The task id.'),
    due: z
      .string()
      .trim()
      .max(40)
      .optional()
      .describe('New deadline: YYYY-MM-DD (end of that day) or ISO date-time with offset.'),
    title: z.string().trim().min(1).max(500).optional().describe('New title, short.'),
    assignee: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe('New assignee: name, alias (e.g. 佐藤さん), member id, or "me".'),
  }),
  output: changeOut,
  async describe(input, ctx) {
    const db = dbOf(ctx);
    const task = await openTask(ctx, input.task_id);
    const plan = await planChange(ctx, task, input);
    const owner = await memberName(db, ctx.orgId, task.assigneeMemberId);
    const en = ctx.lang === 'en';
    const arrow = (a: string, b: string) => `${a}→${b}`;
    const facts = [];
    const parts: string[] = [];
    const oldDue = dueShown(task.dueAt, ctx);
    const newDue = plan.due ? showWhen(plan.due, ctx) : oldDue;
    if (plan.changed.includes('due')) {
      parts.push(en ? `the due date ${arrow(oldDue, newDue)}` : `期限を${arrow(oldDue, newDue)}`);
    }
    if (plan.changed.includes('assignee')) {
      const to = plan.newAssignee!;
      const shown = personLabel(to.name, to.departmentName);
      parts.push(en ? `the assignee ${arrow(owner, shown)}` : `担当を${arrow(`${owner}さん`, `${to.name}さん`)}`);
    }
    if (plan.changed.includes('title')) {
      parts.push(en ? `the title to "${plan.after.title}"` : `内容を『${plan.after.title}』`);
    }
    facts.push(
      fact(ctx, 'task', { ja: 'タスク', en: 'Task' }, task.title),
      fact(
        ctx,
        'assignee',
        { ja: '担当', en: 'Assignee' },
        plan.newAssignee ? arrow(owner, personLabel(plan.newAssignee.name, plan.newAssignee.departmentName)) : owner,
      ),
      fact(ctx, 'due', { ja: '期限', en: 'Due' }, plan.changed.includes('due') ? arrow(oldDue, newDue) : oldDue),
    );
    if (plan.changed.includes('title')) {
      facts.push(fact(ctx, 'title', { ja: '新しい内容', en: 'New title' }, plan.after.title));
    }
    if (isMirrored(task)) {
      const text = en
        ? 'ChatWork cannot edit a task: the old ChatWork task will be marked done and a new one created'
        : 'ChatWork ではタスクを編集できないため、元のタスクを完了にして新しいタスクを作り直します';
      facts.push(fact(ctx, 'chatwork', { ja: 'ChatWork', en: 'ChatWork' }, text));
    }
    const whose = whoseTask(ctx, task, owner);
    const summary = en ? `Change ${parts.join(', ')} of ${whose}.` : `${whose}の${parts.join('、')}に変更します。`;
    const done = en ? `Changed ${parts.join(', ')} of ${whose}.` : `${whose}の${parts.join('、')}に変更しました。`;
    return { summary, done, facts };
  },
  async handler(input, ctx) {
    const sender = requireSender(ctx);
    const db = dbOf(ctx);
    const key = ctx.idempotencyKey;
    const earlier = await changeByKey(db, key);
    if (earlier) return changeOutput(ctx, earlier, true);
    const task = await openTask(ctx, input.task_id);
    const plan = await planChange(ctx, task, input);
    const { change, applied } = await applyChange(db, {
      task,
      kind: 'change',
      after: plan.after,
      byMemberId: sender.id,
      idempotencyKey: key,
      at: ctx.now(),
      ...(plan.changed.includes('due') ? await giverNotice(ctx, task, sender.id) : {}),
    });
    if (!applied) return changeOutput(ctx, change, true);
    const assignee = plan.newAssignee ?? (await resolvePersonOrAsk(ctx, task.assigneeMemberId).catch(() => null));
    const before = await memberName(db, ctx.orgId, task.assigneeMemberId);
    const dueAt = plan.after.dueAt;
    const mirror = await recreateChatworkTask(ctx, task, {
      title: plan.after.title,
      note: recreatedNote(task, plan, { before }, ctx),
      accountId: assignee?.accounts.chatwork,
      dueAt,
      dateOnly: dueAt ? isDateOnlyDue(dueAt, ctx.timezone) : false,
    });
    const sync: ChangeSync = mirror.sync === 'recreated' && mirror.oldLeftOpen ? 'recreated_old_open' : mirror.sync;
    const settled = await settleChange(db, change, { sync, newChatworkTaskId: mirror.newTaskId });
    return changeOutput(ctx, settled, false);
  },
});

/** `cancel_task`: cancels an open task (its ChatWork twin is marked done: ChatWork cannot delete a task). */
export const cancelTask = defineTool({
  name: 'cancel_task',
  description:
    'Cancel (取り消し) an open task that is no longer needed, by its id (context, conversation or search_tasks); ' +
    'finished work is complete_task. If it is unclear which task is meant, ask; never guess. ChatWork cannot ' +
    'delete a task: its ChatWork task is marked done; say so (chatworkNote).',
  triggerExamples: [
    '企画書のタスクは取り消して',
    'さっきのタスク、やっぱりなしで',
    '田中さんに頼んだ資料作成のタスクはキャンセルで',
  ],
  effects: ['db.task_update', 'chatwork.task_update'],
  effectKind: 'cancel',
  risk: 'none',
  requiredLevel: 2,
  paramRoles: { task_id: 'task_change' },
  input: z.object({ task_id: z.string().trim().min(1).max(100).describe('The task id.') }),
  output: z.object({
    taskId: z.string(),
    title: z.string(),
    assignee: personOut,
    status: z.literal('cancelled'),
    chatwork: changeSync,
    chatworkNote: z.string().nullable(),
    alreadyCancelled: z.boolean(),
  }),
  async describe(input, ctx) {
    const db = dbOf(ctx);
    const task = await openTask(ctx, input.task_id);
    const owner = await memberName(db, ctx.orgId, task.assigneeMemberId);
    const facts = [
      fact(ctx, 'task', { ja: 'タスク', en: 'Task' }, task.title),
      fact(ctx, 'assignee', { ja: '担当', en: 'Assignee' }, owner),
      fact(ctx, 'due', { ja: '期限', en: 'Due' }, dueShown(task.dueAt, ctx)),
    ];
    if (isMirrored(task)) {
      const text =
        ctx.lang === 'en'
          ? 'ChatWork cannot delete a task: the ChatWork task will be marked done'
          : 'ChatWork ではタスクを削除できないため、ChatWork のタスクは完了にします';
      facts.push(fact(ctx, 'chatwork', { ja: 'ChatWork', en: 'ChatWork' }, text));
    }
    const whose = whoseTask(ctx, task, owner);
    const en = ctx.lang === 'en';
    return {
      summary: en ? `Cancel ${whose}.` : `${whose}を取り消します。`,
      done: en ? `Cancelled ${whose}.` : `${whose}を取り消しました。`,
      facts,
    };
  },
  async handler(input, ctx) {
    const sender = requireSender(ctx);
    const db = dbOf(ctx);
    const output = async (change: TaskChange, already: boolean) => {
      const f = fieldsOf(change.before);
      const { sync } = storedSync(change.chatwork);
      return {
        taskId: change.taskId,
        title: f.title,
        assignee: { memberId: f.assigneeMemberId, name: await memberName(db, ctx.orgId, f.assigneeMemberId) },
        status: 'cancelled' as const,
        chatwork: sync,
        chatworkNote: changeNote(sync, 'cancel'),
        alreadyCancelled: already,
      };
    };
    const earlier = await changeByKey(db, ctx.idempotencyKey);
    if (earlier) return output(earlier, true);
    const task = await openTask(ctx, input.task_id);
    const { change, applied } = await applyChange(db, {
      task,
      kind: 'cancel',
      after: task,
      byMemberId: sender.id,
      idempotencyKey: ctx.idempotencyKey,
      at: ctx.now(),
    });
    if (!applied) return output(change, true);
    const cw = await completeChatworkTask(ctx, task);
    const sync: ChangeSyncOut =
      cw === 'updated' ? 'completed' : cw === 'failed' ? 'failed' : isMirrored(task) ? 'unreachable' : 'skipped';
    return output(await settleChange(db, change, { sync }), false);
  },
});
