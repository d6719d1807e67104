import type { Db } from '../../db/prisma';
import { formatYMD, zonedParts } from '../../guardian/zoned-time';
import type { ContextSource } from '../context-builder';
import { sqlRunner } from '../../db/sql';

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
export async function goalCompletions(db: Db, orgId: string, goalIds: readonly string[]): Promise<Map<string, GoalCompletion>> {
  const out = new Map<string, GoalCompletion>();
  for (const id of goalIds) out.set(id, { doneTasks: 0, totalTasks: 0, completionRate: null });
  if (goalIds.length === 0) return out;
  const groups = await db.task.groupBy({
    by: ['goalId', 'status'],
    where: { orgId, goalId: { in: [...goalIds] } },
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

/** `YYYY-MM-DD` of an instant in the organisation's time zone. */
export function localDate(instant: Date, timezone: string): string {
  return formatYMD(zonedParts(instant, timezone));
}

/**
 * Context source "goals" (R-X1): the sender's active goals, oldest first (seed 004), each with its
 * completion rate and target date. Null for unknown senders or when there are none.
 */
export const goalsSource: ContextSource = {
  name: 'goals',
  async load({ db, msg, sender, timezone, sql }) {
    if (!sender.known || !sender.memberId) return null;
    // One statement: the active goals with their linked tasks counted.
    const rows = await (sql ?? sqlRunner(db))<{ id: string; title: string; targetDate: Date | null; total: string; done: string }>(
      `SELECT g.id, g.title, g."targetDate", count(t.id) AS total, count(t.id) FILTER (WHERE t.status = 'done') AS done
       FROM goals g LEFT JOIN tasks t ON t."orgId" = g."orgId" AND t."goalId" = g.id
       WHERE g."orgId" = $1 AND g."memberId" = $2 AND g.status = 'active'
       GROUP BY g.id ORDER BY g."createdAt" ASC, g.id ASC LIMIT $3`,
      [msg.orgId, sender.memberId, MAX_GOALS]);
    if (rows.length === 0) return null;
    const goals = rows.map((r) => ({ id: r.id, title: r.title, targetDate: r.targetDate ? new Date(r.targetDate) : null }));
    const progress = new Map(rows.map((r) => {
      const done = Number(r.done);
      const total = Number(r.total);
      return [r.id, { doneTasks: done, totalTasks: total, completionRate: completionRate(done, total) }];
    }));
    const lines = goals.map((g) => {
      const p = progress.get(g.id);
      const rate = p && p.completionRate !== null ? `完了率 ${Math.round(p.completionRate * 100)}% (${p.doneTasks}/${p.totalTasks})` : 'タスク未設定';
      const target = g.targetDate ? `、期限 ${localDate(g.targetDate, timezone)}` : '';
      return `[${g.id}] ${g.title} — ${rate}${target}`;
    });
    return { title: 'この人の目標 (active goals)', lines };
  },
};
