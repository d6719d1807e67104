import type { PromptSet } from '../brain/prompts';
import type { Platform } from '../core/chat';
import { detectLanguage } from '../core/language';
import { personaMessage } from '../core/messages';
import { zonedParts } from '../core/zoned-time';
import type { Db } from '../db/prisma';
import type { ClaimedItem } from '../queue/work-queue';
import { formatWhen } from '../tools/describe';
import { memberAsReader, type NoticeDelivery } from './notice-delivery';

/** The `notification` kind of the notice that a task's due date was moved by someone other than its giver. */
export const TASK_DUE_CHANGED_KIND = 'task_due_changed';

/** Its payload: the change, and the room the giver hears it in (where they gave the task). */
export interface TaskDueChangedPayload {
  kind: typeof TASK_DUE_CHANGED_KIND;
  changeId: string;
  platform: Platform;
  roomId: string;
}

/** The outbox key (and work item dedupe key) of a change's notice: one per change. */
export const taskDueNoticeKey = (changeId: string): string => `notice:task-due:${changeId}`;

/** A stored due date as people read it (a date-only due is stored at 23:59:59 local). */
function shownDue(iso: string | null, o: { timezone: string; lang: 'ja' | 'en'; now: Date }): string {
  if (!iso) return o.lang === 'en' ? 'none' : 'なし';
  const at = new Date(iso);
  const p = zonedParts(at, o.timezone);
  return formatWhen(at, { ...o, dateOnly: p.hh === 23 && p.mm === 59 && at.getUTCSeconds() === 59 });
}

/**
 * Tells whoever gave a task that someone else — usually its assignee — moved its due date (issue 40): a
 * `notification` item enqueued with the change in one transaction (handlers/_task-store.ts), written by the brain
 * in the persona from the change's facts and sent once through the notice delivery, mentioning the giver in the
 * room where the task was given (a group room, or their private room with the bot).
 */
export class TaskChangeNotices {
  constructor(
    private readonly d: { db: Db; delivery: Pick<NoticeDelivery, 'deliver'>; prompts: PromptSet; now?: () => Date },
  ) {}

  async handle(item: ClaimedItem): Promise<void> {
    const { db, prompts } = this.d;
    const p = item.payload as Partial<TaskDueChangedPayload>;
    if (p.kind !== TASK_DUE_CHANGED_KIND || !p.changeId || !p.platform || !p.roomId) return;
    const change = await db.taskChange.findUnique({ where: { id: p.changeId }, include: { task: true } });
    const giverId = change?.task.createdByMemberId;
    if (!change || !giverId) return;
    const ids = [giverId, change.byMemberId, change.task.assigneeMemberId].filter((x): x is string => x !== null);
    const [org, members] = await Promise.all([
      db.organization.findUnique({ where: { id: change.orgId } }),
      db.member.findMany({
        where: { orgId: change.orgId, id: { in: ids } },
        include: { accounts: { where: { platform: p.platform } } },
      }),
    ]);
    const giver = members.find((m) => m.id === giverId);
    if (!org || !giver?.active) return;
    const name = (id: string | null) => members.find((m) => m.id === id)?.name ?? '—';
    const before = (change.before as { dueAt?: string | null }).dueAt ?? null;
    const after = (change.after as { dueAt?: string | null }).dueAt ?? null;
    const now = this.d.now?.() ?? new Date();
    const lang = detectLanguage(change.task.title);
    const when = (iso: string | null, l: 'ja' | 'en') => shownDue(iso, { timezone: org.timezone, lang: l, now });
    const vars = {
      name: giver.name,
      by: name(change.byMemberId),
      assignee: name(change.task.assigneeMemberId),
      title: change.task.title,
      before: when(before, lang),
      after: when(after, lang),
    };
    const account = giver.accounts[0]?.accountId;
    await this.d.delivery.deliver({
      kind: TASK_DUE_CHANGED_KIND,
      orgId: change.orgId,
      platform: p.platform,
      roomId: p.roomId,
      accountId: account ?? giver.id,
      memberId: giver.id,
      reader: memberAsReader(giver),
      instruction: personaMessage(prompts, 'notice.task_due_changed_task', lang, { name: giver.name }),
      facts: {
        title: 'タスクの期限の変更',
        lines: [
          `タスク: ${change.task.title}`,
          `担当: ${vars.assignee}`,
          `変更した人: ${vars.by}`,
          `期限: ${when(before, 'ja')} → ${when(after, 'ja')}`,
          `依頼した人: ${giver.name}（このお知らせの相手）`,
        ],
      },
      fallback: personaMessage(prompts, 'notice.task_due_changed_fallback', lang, vars),
      outboxKey: taskDueNoticeKey(change.id),
      mentionAccountIds: account ? [account] : [],
      reasonCode: 'P_TASK_DUE_CHANGED',
      workItemId: item.id,
      claim: item,
    });
  }
}
