/**
 * The one module that writes the `tasks` table and its change log `task_changes` (docs/architecture.md
 * "Who writes which table"): tasks created by create_task and break_goal_into_tasks, completed, changed and
 * cancelled. Every write is keyed by the call's idempotency key, so a retried turn writes nothing twice.
 */
import type { Platform } from '../src/core/chat';
import type { Db } from '../src/db/prisma';
import type { Task, TaskChange } from '../src/generated/prisma/client';
import { TASK_DUE_CHANGED_KIND, taskDueNoticeKey, type TaskDueChangedPayload } from '../src/notices/task-change-notice';
import { enqueueSelectCte } from '../src/queue/work-queue';
import { ToolError } from '../src/tools/types';
import { createOnce, isUniqueViolation } from './_people';

export type { Task, TaskChange };

/** What a new task row holds. */
export interface NewTask {
  orgId: string;
  platform: string | null;
  roomId: string | null;
  title: string;
  assigneeMemberId: string;
  createdByMemberId: string | null;
  dueAt: Date | null;
  goalId?: string | null;
  idempotencyKey: string | null;
}

/** The task an earlier attempt with this idempotency key created, if any. */
export function taskByKey(db: Db, key: string | null): Promise<Task | null> {
  return key ? db.task.findUnique({ where: { idempotencyKey: key } }) : Promise.resolve(null);
}

/** Creates the task once per idempotency key (a concurrent duplicate gets the winner's row). */
export function insertTaskOnce(db: Db, data: NewTask, opts: { foundNothing?: boolean } = {}) {
  return createOnce(
    () => taskByKey(db, data.idempotencyKey),
    () => db.task.create({ data }),
    opts,
  );
}

/** Creates several tasks, skipping those whose idempotency key exists; returns how many were new. */
export async function insertTasks(db: Db, data: readonly (NewTask & { idempotencyKey: string })[]) {
  const { count } = await db.task.createMany({ data: [...data], skipDuplicates: true });
  const rows = await db.task.findMany({ where: { idempotencyKey: { in: data.map((d) => d.idempotencyKey) } } });
  return { count, rows };
}

/** Records the ChatWork task that mirrors a task. */
export async function linkChatworkTask(db: Db, taskId: string, chatworkTaskId: string): Promise<void> {
  await db.task.update({ where: { id: taskId }, data: { chatworkTaskId } });
}

/** Marks an open task done; false when it was not open any more (done, cancelled, or a concurrent call). */
export async function markTaskDone(db: Db, taskId: string, at: Date): Promise<boolean> {
  const { count } = await db.task.updateMany({
    where: { id: taskId, status: 'open' },
    data: { status: 'done', completedAt: at },
  });
  return count > 0;
}

/** The fields a change may touch. */
export interface TaskFields {
  title: string;
  dueAt: Date | null;
  assigneeMemberId: string;
}

/** How `task_changes.before` / `after` store {@link TaskFields}. */
interface StoredFields {
  title: string;
  dueAt: string | null;
  assigneeMemberId: string;
}

const store = (f: TaskFields): StoredFields => ({
  title: f.title,
  dueAt: f.dueAt ? f.dueAt.toISOString() : null,
  assigneeMemberId: f.assigneeMemberId,
});

/** Reads `before` / `after` of a change row back. */
export function fieldsOf(stored: unknown): TaskFields {
  const s = stored as StoredFields;
  return { title: s.title, dueAt: s.dueAt ? new Date(s.dueAt) : null, assigneeMemberId: s.assigneeMemberId };
}

/** The change an earlier attempt with this idempotency key made, if any. */
export function changeByKey(db: Db, key: string): Promise<TaskChange | null> {
  return db.taskChange.findUnique({ where: { idempotencyKey: key } });
}

/** What {@link applyChange} is asked to do. */
export interface ChangeRequest {
  task: Task;
  kind: 'change' | 'cancel';
  /** The new fields (a cancel keeps them as they are). */
  after: TaskFields;
  byMemberId: string | null;
  idempotencyKey: string;
  at: Date;
  /**
   * Tell the task's giver that its due date moved: where (the room they gave it in) and, in their quiet hours, when
   * they end (null: at once).
   */
  notifyGiver?: { platform: Platform; roomId: string; runAt: Date | null };
}

/** Enqueues the giver's notice of a change ($1 payload, $2 ordering key, $3 dedupe key, $4 run at or null: now). */
const GIVER_NOTICE_SQL = `WITH ${enqueueSelectCte(
  'q',
  `SELECT 'notification', $1::jsonb, $2::text, $3::text, 3, coalesce($4::timestamptz AT TIME ZONE 'UTC', now())`,
  { runAt: true },
)} SELECT 1`;

/**
 * Changes (or cancels) an open task and records the change, in one transaction, once per idempotency key:
 * `applied` is false when an earlier attempt with the key made it (its row is returned). A task that is no
 * longer open is refused (`TASK_CLOSED`). The ChatWork outcome starts as `pending` ({@link settleChange}).
 */
export async function applyChange(db: Db, r: ChangeRequest): Promise<{ change: TaskChange; applied: boolean }> {
  const data =
    r.kind === 'cancel'
      ? { status: 'cancelled', completedAt: r.at }
      : { title: r.after.title, dueAt: r.after.dueAt, assigneeMemberId: r.after.assigneeMemberId };
  try {
    const change = await db.$transaction(async (tx) => {
      const { count } = await tx.task.updateMany({ where: { id: r.task.id, status: 'open' }, data });
      if (count === 0)
        throw new ToolError('That task is already done or cancelled; it cannot be changed.', 'TASK_CLOSED');
      const created = await tx.taskChange.create({
        data: {
          orgId: r.task.orgId,
          taskId: r.task.id,
          kind: r.kind,
          byMemberId: r.byMemberId,
          before: { ...store(r.task) },
          after: { ...store(r.after) },
          oldChatworkTaskId: r.task.chatworkTaskId,
          idempotencyKey: r.idempotencyKey,
          createdAt: r.at,
        },
      });
      // The notice goes in with the change or not at all: one change, one notice.
      const n = r.notifyGiver;
      if (n && r.task.createdByMemberId) {
        const payload: TaskDueChangedPayload = {
          kind: TASK_DUE_CHANGED_KIND,
          changeId: created.id,
          platform: n.platform,
          roomId: n.roomId,
        };
        const ordering = `notice:${n.platform}:${n.roomId}:${r.task.createdByMemberId}`;
        await tx.$executeRawUnsafe(
          GIVER_NOTICE_SQL,
          JSON.stringify(payload),
          ordering,
          taskDueNoticeKey(created.id),
          n.runAt?.toISOString() ?? null,
        );
      }
      return created;
    });
    return { change, applied: true };
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const winner = await changeByKey(db, r.idempotencyKey);
    if (!winner) throw err;
    return { change: winner, applied: false };
  }
}

/**
 * The ChatWork outcome of a change, as `task_changes.chatwork` stores it (`recreated_old_open`: the new task was
 * created but the old one could not be completed).
 */
export type ChangeSync =
  'recreated' | 'recreated_old_open' | 'completed' | 'skipped' | 'unreachable' | 'failed' | 'unknown';

/**
 * Records what happened on ChatWork. When a new ChatWork task replaced the old one the task points to it;
 * when the old one was completed without a replacement (the new assignee has no ChatWork account) it points
 * to none.
 */
export async function settleChange(
  db: Db,
  change: TaskChange,
  outcome: { sync: ChangeSync; newChatworkTaskId?: string },
): Promise<TaskChange> {
  const newId = outcome.newChatworkTaskId ?? null;
  return db.$transaction(async (tx) => {
    if (change.kind === 'change' && outcome.sync.startsWith('recreated') && newId) {
      await tx.task.update({ where: { id: change.taskId }, data: { chatworkTaskId: newId } });
    } else if (change.kind === 'change' && outcome.sync === 'completed') {
      await tx.task.update({ where: { id: change.taskId }, data: { chatworkTaskId: null } });
    }
    return tx.taskChange.update({
      where: { id: change.id },
      data: { chatwork: outcome.sync, newChatworkTaskId: newId },
    });
  });
}
