import type { ContextSource } from '../context-builder';
import { zonedParts } from '../../guardian/zoned-time';

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

const dueFirst = [{ dueAt: { sort: 'asc', nulls: 'last' } }, { createdAt: 'asc' }, { id: 'asc' }] as const;

/**
 * Open tasks relevant to the sender (R-X1): their own open tasks (due first, with 期限 / 期限切れ), and
 * open tasks they gave to others. Only the sender's own tasks are read; ids let the model complete them.
 */
export const tasksSource: ContextSource = {
  name: 'open_tasks',
  async load({ db, msg, sender, now, timezone }) {
    if (!sender.known || !sender.memberId) return null;
    const me = sender.memberId;
    const ownWhere = { orgId: msg.orgId, status: 'open', assigneeMemberId: me };
    const givenWhere = { orgId: msg.orgId, status: 'open', createdByMemberId: me, assigneeMemberId: { not: me } };
    const [own, ownCount, given, givenCount] = await Promise.all([
      db.task.findMany({ where: ownWhere, orderBy: [...dueFirst], take: MAX_OWN, select: { id: true, title: true, dueAt: true } }),
      db.task.count({ where: ownWhere }),
      db.task.findMany({ where: givenWhere, orderBy: [...dueFirst], take: MAX_ASSIGNED, select: { id: true, title: true, dueAt: true, assigneeMemberId: true } }),
      db.task.count({ where: givenWhere }),
    ]);
    if (own.length === 0 && given.length === 0) return null;
    const lines: string[] = [];
    if (own.length > 0) {
      lines.push(`あなたが担当する未完了タスク（${ownCount}件）:`);
      for (const t of own) lines.push(`- ${t.title}（id: ${t.id}、${formatDueJa(t.dueAt, now, timezone)}）`);
      if (ownCount > own.length) lines.push(`（ほか${ownCount - own.length}件）`);
    }
    if (given.length > 0) {
      const names = new Map((await db.member.findMany({
        where: { orgId: msg.orgId, id: { in: [...new Set(given.map((t) => t.assigneeMemberId))] } },
        select: { id: true, name: true },
      })).map((m) => [m.id, m.name]));
      lines.push(`あなたが依頼した未完了タスク（${givenCount}件）:`);
      for (const t of given) {
        lines.push(`- ${t.title}（担当: ${names.get(t.assigneeMemberId) ?? t.assigneeMemberId}、id: ${t.id}、${formatDueJa(t.dueAt, now, timezone)}）`);
      }
      if (givenCount > given.length) lines.push(`（ほか${givenCount - given.length}件）`);
    }
    return { title: '未完了のタスク', lines };
  },
};
