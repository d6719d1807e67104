import type { PromptSet } from '../brain/prompts';
import { neutralise } from '../context/quote';
import { detectLanguage } from '../core/language';
import { personaMessage } from '../core/messages';
import type { Db } from '../db/prisma';
import type { ClaimedItem } from '../queue/work-queue';
import { memberAsReader, type NoticeDelivery } from './notice-delivery';
import { claimReminderForSending, finishReminder } from '../scheduler/reminders';

/**
 * Runs a due reminder (`notification` item of kind `reminder`, R-P2): the brain writes it in the persona for its
 * member through {@link NoticeDelivery} (Guardian, sent once under `notice:reminder:<id>`, history, record; a persona
 * template when the brain cannot write). A reminder cancelled while it was being written is not sent.
 */
export class ReminderNotices {
  constructor(
    private readonly d: { db: Db; delivery: Pick<NoticeDelivery, 'deliver'>; prompts: PromptSet; shadowMode: boolean },
  ) {}

  async handle(item: ClaimedItem): Promise<void> {
    const { db, prompts } = this.d;
    const reminderId = (item.payload as { reminderId?: string }).reminderId;
    const r = reminderId ? await db.reminder.findUnique({ where: { id: reminderId } }) : null;
    if (!r || r.status === 'sent' || r.status === 'cancelled') return;
    const member = await db.member.findUnique({
      where: { orgId_id: { orgId: r.orgId, id: r.memberId } },
      include: { accounts: { where: { platform: r.platform } } },
    });
    if (!member || !member.active) return finishReminder(db, r.id, 'cancelled');
    const account = member.accounts[0]?.accountId ?? member.id;
    const lang = detectLanguage(r.text);
    // The reminder text is stored text: one inert line inside the template's quotes (data, never instructions).
    const vars = { name: member.name, text: neutralise(r.text) };
    const outcome = await this.d.delivery.deliver({
      kind: 'reminder',
      orgId: r.orgId,
      platform: r.platform as 'chatwork' | 'discord' | 'console',
      roomId: r.roomId,
      accountId: account,
      memberId: member.id,
      reader: memberAsReader(member),
      instruction: personaMessage(prompts, 'notice.reminder_task', lang, vars),
      fallback: personaMessage(prompts, 'notice.reminder_fallback', lang, vars),
      whenBlocked: personaMessage(prompts, 'reply.blocked_confidential', lang),
      quoted: [r.text],
      outboxKey: `notice:reminder:${r.id}`,
      mentionAccountIds: await this.mentions(r, account),
      reasonCode: 'P_REMINDER',
      workItemId: item.id,
      claim: item,
      // queued → sending, conditionally: a reminder cancelled while the notice was being written is not sent, and
      // from here on cancel_reminder says it is already on its way.
      stillWanted: () => claimReminderForSending(db, r.id),
    });
    if (outcome !== 'withdrawn') await finishReminder(db, r.id, this.d.shadowMode ? 'shadow' : 'sent');
  }

  /**
   * Who a reminder mentions: its member; nobody for a room reminder; the department's active members (with an
   * account on the platform) for a department reminder. From the directory, never from text.
   */
  private async mentions(
    r: { orgId: string; platform: string; audience: string; departmentId: string | null },
    account: string,
  ): Promise<string[]> {
    if (r.audience === 'member') return [account];
    if (r.audience !== 'department' || !r.departmentId) return [];
    const members = await this.d.db.member.findMany({
      where: { orgId: r.orgId, departmentId: r.departmentId, active: true },
      include: { accounts: { where: { platform: r.platform } } },
      orderBy: { id: 'asc' },
    });
    return members.flatMap((m) => m.accounts.map((a) => a.accountId));
  }
}
