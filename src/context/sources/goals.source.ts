import type { Db } from '../../db/prisma';
import { localDate } from '../../core/zoned-time';
import { quoted } from '../quote';
import { defineSqlSource } from '../sql-source';

/** Progress of one goal: tasks linked through `Task.goalId` (seed 004: computed on read, never stored). */
export interface GoalCompletion {
  doneTasks: number;
  totalTasks: number;
  /** done / total, 0..1 rounded to 3 decimals; null when the goal has no tasks yet. */
  completionRate: number | null;
}

/** Most goals shown in the context. */
const MAX_GOALS = 10;

/** done / total rounded to 3 decimals; null for no tasks. */
export function completionRate(done: number, total: number): number | null {
  return total === 0 ? null : Math.round((done / total) * 1000) / 1000;
}

/** Completion of each goal in `goalIds` (goals without tasks get 0/0 and a null rate). */
export async function goalCompletions(
  db: Db,
  orgId: string,
  goalIds: readonly string[],
): Promise<Map<string, GoalCompletion>> {
  const out = new Map<string, GoalCompletion>();
  for (const id of goalIds) out.set(id, { doneTasks: 0, totalTasks: 0, completionRate: null });
  if (goalIds.length === 0) return out;
  const groups = await db.task.groupBy({
    by: ['goalId', 'status'],
    where: { orgId, goalId: { in: [...goalIds] }, status: { not: 'cancelled' } },
    _count: { _all: true },
  });
  for (const g of groups) {
    const c = g.goalId ? out.get(g.goalId) : undefined;
    if (!c) continue;
    c.totalTasks += g._count._all;
    if (g.status === 'done') c.doneTasks += g._count._all;
  }
  for (const c of out.values()) c.completionRate = completionRate(c.doneTasks, c.totalTasks);
  return out;
}

export { localDate };

/**
 * Context source "goals" (R-X1): the sender's active goals, oldest first (seed 004), each with its
 * completion rate and target date. Null for unknown senders or when there are none.
 */
interface GoalRow {
  id: string;
  title: string;
  targetDate: string | null;
  total: number;
  done: number;
}

export const goalsSource = defineSqlSource<GoalRow[]>({
  name: 'goals',
  // The active goals with their linked tasks counted.
  // Each shown goal counts its own tasks (index on tasks (orgId, goalId)): a join over the organisation's tasks read
  // all of them in every turn of a member with goals (5.6 ms at 20,000 tasks).
  query: `(SELECT coalesce(json_agg(x ORDER BY x.created, x.id), '[]') FROM (
      SELECT g.id, g.title, g."targetDate", g.created, c.total, c.done
      FROM (SELECT id, "orgId", title, "targetDate", "createdAt" AS created FROM goals
            WHERE "orgId" = $1 AND "memberId" = $2 AND status = 'active'
            ORDER BY "createdAt" ASC, id ASC LIMIT ${MAX_GOALS}) g
      CROSS JOIN LATERAL (SELECT count(*) AS total, count(*) FILTER (WHERE t.status = 'done') AS done
                          FROM tasks t WHERE t."orgId" = g."orgId" AND t."goalId" = g.id
                          AND t.status <> 'cancelled') c) x)`,
  render(rows, { sender, timezone }) {
    if (!sender.known || !sender.memberId || rows.length === 0) return null;
    const lines = rows.map((g) => {
      const rate = completionRate(Number(g.done), Number(g.total));
      const shown =
        rate !== null ? `完了率 ${Math.round(rate * 100)}% (${Number(g.done)}/${Number(g.total)})` : 'タスク未設定';
      const target = g.targetDate ? `、期限 ${localDate(new Date(g.targetDate), timezone)}` : '';
      return `[${g.id}] ${quoted(g.title)} — ${shown}${target}`;
    });
    return { title: 'この人の目標 (active goals)', lines };
  },
});
