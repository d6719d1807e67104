import type { Platform } from '../core/chat';
import type { PromptSet } from '../brain/prompts';
import { personaMessage } from '../core/messages';
import type { Db } from '../db/prisma';
import type { ClaimedItem } from '../queue/work-queue';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import { memberAsReader, type NoticeDelivery } from './notice-delivery';
import { noticeFacts } from './notice-facts';
import type { ScheduledNoticePayload } from '../scheduler/notices/fire';
import { noticesEnabled } from '../scheduler/notices/preferences';

const REASON: Record<ScheduledNoticePayload['scheduleKind'], string> = {
  deadline_reminder: 'P_DEADLINE_REMINDER',
  daily_digest: 'P_DAILY_DIGEST',
  goal_checkin: 'P_GOAL_CHECKIN',
};

/**
 * Runs one scheduled notice (`notification` item of kind `schedule`): re-checks at send time that the
 * member, the schedule and their wish to hear still stand, gathers the facts with the AuthorizationGate
 * applied to the reader, sends nothing when there is nothing to say, and otherwise lets the brain write
 * it (NoticeDelivery: persona, Guardian, once).
 */
export class ScheduledNoticeHandler {
  constructor(
    private readonly d: {
      db: Db;
      delivery: NoticeDelivery;
      prompts: PromptSet;
      logger: Logger;
      metrics?: Metrics;
      now?: () => Date;
    },
  ) {}

  async handle(item: ClaimedItem): Promise<void> {
    const p = item.payload as ScheduledNoticePayload;
    const { db } = this.d;
    const skip = (outcome: string) => {
      this.d.metrics?.notices.inc({ kind: p.scheduleKind, outcome });
    };
    const [member, org, schedule, prefs] = await Promise.all([
      db.member.findUnique({
        where: { orgId_id: { orgId: p.orgId, id: p.memberId } },
        include: { accounts: { where: { platform: p.platform } } },
      }),
      db.organization.findUnique({ where: { id: p.orgId } }),
      db.schedule.findUnique({ where: { id: p.scheduleId } }),
      db.noticePreference.findMany({ where: { orgId: p.orgId, memberId: p.memberId } }),
    ]);
    if (!member?.active || !org) return skip('member_gone');
    if (!schedule?.enabled || schedule.cancelledAt) return skip('schedule_gone');
    // A digest the member asked for in chat is their own wish; the directory's notices follow their choices.
    const asked = schedule.source === 'chat';
    if (!asked && !noticesEnabled(member.noticesOptOut, prefs, p.scheduleKind)) return skip('opted_out');
    const dept = member.departmentId
      ? await db.department.findUnique({ where: { orgId_id: { orgId: p.orgId, id: member.departmentId } } })
      : null;
    const now = this.d.now?.() ?? new Date();
    const recipient = {
      memberId: member.id,
      name: member.name,
      level: member.level,
      departmentId: member.departmentId,
    };
    const facts = await noticeFacts(db, {
      orgId: p.orgId,
      kind: p.scheduleKind,
      recipient,
      now,
      timezone: org.timezone,
    });
    if (facts.lines.length === 0) return skip('empty');
    const account = member.accounts[0]?.accountId ?? member.id;
    const vars = { name: member.name, facts: facts.lines.join('\n') };
    await this.d.delivery.deliver({
      kind: p.scheduleKind,
      orgId: p.orgId,
      platform: p.platform as Platform,
      roomId: p.roomId,
      accountId: account,
      memberId: member.id,
      reader: memberAsReader(member, dept?.name ?? null),
      instruction: personaMessage(this.d.prompts, `notice.${p.scheduleKind}_task`, 'ja', vars),
      facts,
      quoted: facts.quoted,
      fallback: personaMessage(this.d.prompts, `notice.${p.scheduleKind}_fallback`, 'ja', vars),
      outboxKey: item.dedupeKey,
      claim: item,
      mentionAccountIds: member.accounts.length > 0 ? [account] : [],
      reasonCode: REASON[p.scheduleKind],
      workItemId: item.id,
    });
  }
}
