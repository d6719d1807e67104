/**
 * Mirrors Hisho tasks on ChatWork (R-T4): creation in the turn's ChatWork room, and completion.
 * ChatWork failures never undo the local task; they are reported as `failed`.
 */
import type { ToolContext } from '../src/tools/types';

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
  try {
    const res = await cw.createTask(ctx.roomId, {
      body: t.note ? `${t.title}\n${t.note}` : t.title,
      toIds: [t.accountId],
      ...(t.dueAt
        ? { limit: Math.floor(t.dueAt.getTime() / 1000), limitType: t.dateOnly ? ('date' as const) : ('time' as const) }
        : { limitType: 'none' as const }),
    });
    const taskId = res.taskIds[0];
    return taskId ? { sync: 'created', taskId } : { sync: 'failed' };
  } catch (err) {
    return { sync: (err as { uncertain?: unknown }).uncertain === true ? 'unknown' : 'failed' };
  }
}

/** Marks a mirrored ChatWork task done; tolerated to fail. */
export async function completeChatworkTask(
  ctx: ToolContext,
  task: { platform: string | null; roomId: string | null; chatworkTaskId: string | null },
): Promise<'updated' | 'skipped' | 'failed'> {
  const cw = ctx.services.chatwork;
  if (!cw || !task.chatworkTaskId || task.platform !== 'chatwork' || !task.roomId) return 'skipped';
  try {
    await cw.updateTaskStatus(task.roomId, task.chatworkTaskId, 'done');
    return 'updated';
  } catch {
    return 'failed';
  }
}
