import { quoted } from '../quote';
import { defineSqlSource } from '../sql-source';
import { zonedParts } from '../../core/zoned-time';

/** At most this many of the sender's own open tasks are listed. */
const MAX_OWN = 10;
/** At most this many open tasks the sender gave to others are listed. */
const MAX_ASSIGNED = 5;
const WEEKDAYS = ['月', '火', '水', '木', '金', '土', '日'];
const pad = (n: number): string => String(n).padStart(2, '0');

/**
 * 「期限 11/25(火)」, 「期限 11/25(火) 15:00」 (a due at 23:59:59 local is date-only), with the year when it
 * is not the current one, plus 「期限切れ」 when past.
 */
export function formatDueJa(due: Date | null, now: Date, timezone: string): string {
  if (!due) return '期限なし';
  const p = zonedParts(due, timezone);
  const year = p.y !== zonedParts(now, timezone).y ? `${p.y}/` : '';
  const dateOnly = p.hh === 23 && p.mm === 59 && due.getUTCSeconds() === 59;
  const text = `期限 ${year}${p.m}/${p.d}(${WEEKDAYS[p.weekday] ?? ''})${dateOnly ? '' : ` ${pad(p.hh)}:${pad(p.mm)}`}`;
  return due.getTime() < now.getTime() ? `${text}、期限切れ` : text;
}

/**
 * Open tasks relevant to the sender (R-X1): their own open tasks (due first, with 期限 / 期限切れ), and
 * open tasks they gave to others. Only the sender's own tasks are read; ids let the model complete them.
 */
interface TaskRow {
  id: string;
  title: string;
  dueAt: string | null;
  assigneeMemberId: string;
  assignee: string | null;
  own: boolean;
  total: number;
}

export const tasksSource = defineSqlSource<TaskRow[]>({
  name: 'open_tasks',
  // Both lists (top N by due date) with their totals and the assignees' names.
  query: `(SELECT coalesce(json_agg(x), '[]') FROM (
      (SELECT t.id, t.title, t."dueAt", t."assigneeMemberId", NULL AS assignee, true AS own,
              (SELECT count(*) FROM tasks c
               WHERE c."orgId" = $1 AND c.status = 'open' AND c."assigneeMemberId" = $2) AS total
       FROM tasks t WHERE t."orgId" = $1 AND t.status = 'open' AND t."assigneeMemberId" = $2
       ORDER BY t."dueAt" ASC NULLS LAST, t."createdAt" ASC, t.id ASC LIMIT ${MAX_OWN})
      UNION ALL
      (SELECT t.id, t.title, t."dueAt", t."assigneeMemberId", m.name, false,
              (SELECT count(*) FROM tasks c
               WHERE c."orgId" = $1 AND c.status = 'open' AND c."createdByMemberId" = $2 AND c."assigneeMemberId" <> $2)
       FROM tasks t LEFT JOIN members m ON m."orgId" = t."orgId" AND m.id = t."assigneeMemberId"
       WHERE t."orgId" = $1 AND t.status = 'open' AND t."createdByMemberId" = $2 AND t."assigneeMemberId" <> $2
       ORDER BY t."dueAt" ASC NULLS LAST, t."createdAt" ASC, t.id ASC LIMIT ${MAX_ASSIGNED})) x)`,
  render(rows, { sender, now, timezone }) {
    if (!sender.known || !sender.memberId) return null;
    const own = rows.filter((r) => r.own).map((r) => ({ ...r, dueAt: r.dueAt ? new Date(r.dueAt) : null }));
    const given = rows.filter((r) => !r.own).map((r) => ({ ...r, dueAt: r.dueAt ? new Date(r.dueAt) : null }));
    const ownCount = Number(own[0]?.total ?? 0);
    const givenCount = Number(given[0]?.total ?? 0);
    if (own.length === 0 && given.length === 0) return null;
    const lines: string[] = [];
    if (own.length > 0) {
      lines.push(`あなたが担当する未完了タスク（${ownCount}件）:`);
      for (const t of own) lines.push(`- ${quoted(t.title)}（id: ${t.id}、${formatDueJa(t.dueAt, now, timezone)}）`);
      if (ownCount > own.length) lines.push(`（ほか${ownCount - own.length}件）`);
    }
    if (given.length > 0) {
      lines.push(`あなたが依頼した未完了タスク（${givenCount}件）:`);
      for (const t of given) {
        const who = t.assignee ?? t.assigneeMemberId;
        lines.push(`- ${quoted(t.title)}（担当: ${who}、id: ${t.id}、${formatDueJa(t.dueAt, now, timezone)}）`);
      }
      if (givenCount > given.length) lines.push(`（ほか${givenCount - given.length}件）`);
    }
    return { title: '未完了のタスク', lines };
  },
});
