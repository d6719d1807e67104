/**
 * Mirrors Hisho tasks on ChatWork (R-T4): creation in the turn's ChatWork room, and completion.
 * ChatWork failures never undo the local task; they are reported as `failed`.
 */
import type { ChatworkTasksApi, ToolContext } from '../src/tools/types';

/**
 * What happened on ChatWork. `unknown`: the request may have reached ChatWork (a timeout or a 5xx); it is
 * not sent again (that could create the task twice), and the person is told to check.
 */
export type ChatworkSync = 'created' | 'updated' | 'skipped' | 'failed' | 'unknown';

/** Inputs of {@link createChatworkTask}. */
export interface ChatworkTaskInput {
  title: string;
  note?: string;
  /** The assignee's ChatWork account id, if they have one. */
  accountId: string | undefined;
  dueAt: Date | null;
  dateOnly: boolean;
}

/**
 * Creates the ChatWork task when the turn is in a ChatWork room, the client is configured and the
 * assignee has a ChatWork account. Returns the new ChatWork task id (or why there is none).
 */
export async function createChatworkTask(
  ctx: ToolContext,
  t: ChatworkTaskInput,
): Promise<{ sync: Exclude<ChatworkSync, 'updated'>; taskId?: string }> {
  const cw = ctx.services.chatwork;
  if (ctx.platform !== 'chatwork' || !cw || !t.accountId) return { sync: 'skipped' };
  return postTask(cw, ctx.roomId, { ...t, accountId: t.accountId });
}

async function postTask(
  cw: ChatworkTasksApi,
  roomId: string,
  t: ChatworkTaskInput & { accountId: string },
): Promise<{ sync: 'created' | 'failed' | 'unknown'; taskId?: string }> {
  try {
    const res = await cw.createTask(roomId, {
      body: t.note ? `${t.title}\n${t.note}` : t.title,
      toIds: [t.accountId],
      ...(t.dueAt
        ? { limit: Math.floor(t.dueAt.getTime() / 1000), limitType: t.dateOnly ? ('date' as const) : ('time' as const) }
        : { limitType: 'none' as const }),
    });
    const taskId = res.taskIds[0];
    return taskId ? { sync: 'created', taskId } : { sync: 'failed' };
  } catch (err) {
    return { sync: isUncertain(err) ? 'unknown' : 'failed' };
  }
}

const isUncertain = (err: unknown): boolean => (err as { uncertain?: unknown } | null)?.uncertain === true;

/** A task as mirrored on ChatWork: the room it was created in and its ChatWork task id. */
export interface MirroredTask {
  platform: string | null;
  roomId: string | null;
  chatworkTaskId: string | null;
}

/** True when the task has a ChatWork twin. */
export function isMirrored(task: MirroredTask): task is MirroredTask & { roomId: string; chatworkTaskId: string } {
  return task.platform === 'chatwork' && task.roomId !== null && task.chatworkTaskId !== null;
}

/**
 * What a change did on ChatWork, which cannot edit a task (PLATFORMS.md: a task is created, and its status set
 * to done or open): `recreated` — a new task with the new title / assignee / deadline was created, then the
 * old one completed; `completed` — the old one was completed and no new one made (the new assignee has no
 * ChatWork account); `skipped` — the task has no ChatWork twin; `unreachable` — it has one but ChatWork is not
 * configured here; `failed` — nothing changed on ChatWork (or the old task could not be completed: see
 * `oldLeftOpen`); `unknown` — the new task may have been created (time-out or 5xx): it is not sent again, the
 * old task is left open, and the person is told to check.
 */
export type ChangeMirror =
  | { sync: 'recreated'; newTaskId: string; oldLeftOpen: boolean }
  | { sync: 'completed' | 'skipped' | 'unreachable' | 'failed' | 'unknown'; newTaskId?: undefined };

/**
 * Mirrors a changed task on ChatWork: the new task first (with `note` saying why it was made again), then
 * the old one completed — so a failure leaves the old task as it was rather than none at all.
 */
export async function recreateChatworkTask(
  ctx: Pick<ToolContext, 'services'>,
  task: MirroredTask,
  t: ChatworkTaskInput,
): Promise<ChangeMirror> {
  if (!isMirrored(task)) return { sync: 'skipped' };
  const cw = ctx.services.chatwork;
  if (!cw) return { sync: 'unreachable' };
  if (!t.accountId) {
    return (await setDone(cw, task)) ? { sync: 'completed' } : { sync: 'failed' };
  }
  const created = await postTask(cw, task.roomId, { ...t, accountId: t.accountId });
  if (created.sync !== 'created' || !created.taskId) return { sync: created.sync === 'unknown' ? 'unknown' : 'failed' };
  return { sync: 'recreated', newTaskId: created.taskId, oldLeftOpen: !(await setDone(cw, task)) };
}

async function setDone(cw: ChatworkTasksApi, task: { roomId: string; chatworkTaskId: string }): Promise<boolean> {
  try {
    await cw.updateTaskStatus(task.roomId, task.chatworkTaskId, 'done');
    return true;
  } catch {
    return false;
  }
}

/** Marks a mirrored ChatWork task done (completing or cancelling it: ChatWork cannot delete one); tolerated to fail. */
export async function completeChatworkTask(
  ctx: Pick<ToolContext, 'services'>,
  task: MirroredTask,
): Promise<'updated' | 'skipped' | 'failed'> {
  const cw = ctx.services.chatwork;
  if (!cw || !isMirrored(task)) return 'skipped';
  return (await setDone(cw, task)) ? 'updated' : 'failed';
}
