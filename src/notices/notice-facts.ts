import { authorize, loadDirectory, type Actor, type Directory } from '../authorization';
import { formatDueJa } from '../context/sources/tasks.source';
import { completionRate } from '../context/sources/goals.source';
import type { ContextSection } from '../context/types';
import type { Db } from '../db/prisma';
import { localDate } from '../core/zoned-time';
import type { ToolMeta } from '../tools/types';
import { dayBounds, type NoticeKind } from '../scheduler/notices/fire';

/** The member a notice is written for. */
export interface NoticeRecipient {
  memberId: string;
  name: string;
  level: number;
  departmentId: string | null;
}

/** Most items listed per group (the rest are counted). */
const MAX_ITEMS = 8;

/**
 * The AuthorizationGate question a notice asks about each person it mentions: "may the reader see this
 * member's data?" — a read-only pseudo-tool whose `subject` is a scope-checked `target_user` (R-P3, R-Z1).
 */
const NOTICE_SUBJECT: ToolMeta = {
  name: 'notice_subject',
  effects: [],
  risk: 'none',
  requiredLevel: 1,
  requiresConfirmation: false,
  enabled: true,
  paramRoles: { subject: 'target_user' },
};

/** A predicate built from the AuthorizationGate with the recipient as the actor. */
export function readerScope(reader: NoticeRecipient, directory: Directory): (memberId: string) => boolean {
  const actor: Actor = {
    known: true,
    memberId: reader.memberId,
    name: reader.name,
    level: reader.level,
    departmentId: reader.departmentId,
    roomAuthority: 'member',
    roomListed: true,
    source: 'directory',
  };
  const proposal = (memberId: string) => ({
    id: 'notice',
    toolName: NOTICE_SUBJECT.name,
    parameters: { subject: { memberId } },
  });
  return (memberId) =>
    authorize({ actor, tool: NOTICE_SUBJECT, proposal: proposal(memberId), directory }).result === 'ALLOWED';
}

interface TaskRow {
  id: string;
  title: string;
  dueAt: Date | null;
  assigneeMemberId: string;
}

/**
 * What a notice may say, gathered for one recipient and filtered through the AuthorizationGate with the
 * recipient as the reader: their own tasks and goals, tasks they gave to people inside their scope, and
 * (level 3+) overdue tasks of people inside their scope. An empty `lines` means "nothing to say".
 */
export async function noticeFacts(
  db: Db,
  input: {
    orgId: string;
    kind: NoticeKind;
    recipient: NoticeRecipient;
    now: Date;
    timezone: string;
  },
): Promise<ContextSection & { quoted: string[] }> {
  const { orgId, kind, recipient, now, timezone } = input;
  const directory = await loadDirectory(db, orgId);
  const mayRead = readerScope(recipient, directory);
  const nameOf = new Map(directory.members.map((m) => [m.id, m.name ?? m.id]));
  const { tomorrow, dayAfter } = dayBounds(now, timezone);
  const due = (t: TaskRow) => formatDueJa(t.dueAt, now, timezone);
  const lines: string[] = [];
  // The titles the notice lists: stored work items, which the notice may say back (the reply check, issue 40).
  const quoted: string[] = [];
  const list = (title: string, rows: TaskRow[], withAssignee = false) => {
    if (rows.length === 0) return;
    lines.push(`${title}（${rows.length}件）`);
    for (const t of rows.slice(0, MAX_ITEMS)) {
      quoted.push(t.title);
      lines.push(`・${t.title}（${withAssignee ? `担当: ${nameOf.get(t.assigneeMemberId) ?? '—'}、` : ''}${due(t)}）`);
    }
    if (rows.length > MAX_ITEMS) lines.push(`（ほか${rows.length - MAX_ITEMS}件）`);
  };
  const select = { id: true, title: true, dueAt: true, assigneeMemberId: true } as const;

  if (kind === 'goal_checkin') {
    const goals = await db.goal.findMany({
      where: { orgId, memberId: recipient.memberId, status: 'active' },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: MAX_ITEMS,
    });
    const counts =
      goals.length === 0
        ? []
        : await db.task.groupBy({
            by: ['goalId', 'status'],
            where: { orgId, goalId: { in: goals.map((g) => g.id) }, status: { not: 'cancelled' } },
            _count: { _all: true },
          });
    for (const g of goals) {
      const total = counts.filter((c) => c.goalId === g.id).reduce((a, c) => a + c._count._all, 0);
      const done = counts
        .filter((c) => c.goalId === g.id && c.status === 'done')
        .reduce((a, c) => a + c._count._all, 0);
      const rate = completionRate(done, total);
      const progress = rate === null ? 'タスク未設定' : `完了率 ${Math.round(rate * 100)}%（${done}/${total}）`;
      const target = g.targetDate ? `、目標日 ${localDate(g.targetDate, timezone)}` : '';
      lines.push(`・${g.title}（${progress}${target}）${g.progressNote ? ` 最近のメモ: ${g.progressNote}` : ''}`);
      quoted.push(g.title);
    }
    return { title: '通知の内容: 進行中の目標', lines: lines.length > 0 ? ['進行中の目標:', ...lines] : [], quoted };
  }

  const own = await db.task.findMany({
    where: { orgId, assigneeMemberId: recipient.memberId, status: 'open', dueAt: { lt: dayAfter } },
    orderBy: [{ dueAt: 'asc' }, { id: 'asc' }],
    select,
  });
  list(
    '期限切れのタスク',
    own.filter((t) => t.dueAt! < now),
  );
  list(
    '今日が期限のタスク',
    own.filter((t) => t.dueAt! >= now && t.dueAt! < tomorrow),
  );
  list(
    '明日が期限のタスク',
    own.filter((t) => t.dueAt! >= tomorrow),
  );
  if (kind === 'daily_digest') {
    const given = await db.task.findMany({
      where: {
        orgId,
        createdByMemberId: recipient.memberId,
        assigneeMemberId: { not: recipient.memberId },
        status: 'open',
        dueAt: { lt: tomorrow },
      },
      orderBy: [{ dueAt: 'asc' }, { id: 'asc' }],
      select,
    });
    list(
      'あなたが依頼したタスクで、今日が期限か期限切れのもの',
      given.filter((t) => mayRead(t.assigneeMemberId)),
      true,
    );
    if (recipient.level >= 3) {
      const team = directory.members.map((m) => m.id).filter((id) => id !== recipient.memberId && mayRead(id));
      const overdue =
        team.length === 0
          ? []
          : await db.task.findMany({
              where: {
                orgId,
                assigneeMemberId: { in: team },
                status: 'open',
                dueAt: { lt: now },
                NOT: { createdByMemberId: recipient.memberId },
              },
              orderBy: [{ dueAt: 'asc' }, { id: 'asc' }],
              select,
              take: 50,
            });
      list(
        'チーム（あなたの担当範囲）の期限切れタスク',
        overdue.filter((t) => mayRead(t.assigneeMemberId)),
        true,
      );
    }
  }
  const title = kind === 'daily_digest' ? '通知の内容: 今日のまとめ' : '通知の内容: 期限の近いタスク';
  return { title, lines, quoted };
}
