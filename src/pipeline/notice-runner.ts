import type { InboundMessage } from '../core/chat';
import type { Brain } from '../brain/brain';
import type { LlmCallRecord } from '../core/llm-usage';
import { detectLanguage } from '../core/language';
import { type PromptSet } from '../brain/prompts';
import { personaMessage } from '../core/messages';
import type { ContextBuilder } from '../context/context-builder';
import type { Db } from '../db/prisma';
import { checkReplyText, type GuardianConfig } from '../guardian';
import type { ClaimedItem } from '../intake/work-queue';
import type { Logger } from '../observability/logger';
import type { TurnRecorder } from '../audit/turn-recorder';
import type { Outbox } from '../outbox/outbox';
import type { ConversationLog } from '../state/conversation-log';
import { neutralise } from '../context/quote';
import { claimReminderForSending, finishReminder } from '../scheduler/reminders';

export interface NoticeRunnerDeps {
  db: Db;
  brain: Pick<Brain, 'decide'>;
  contextBuilder: ContextBuilder;
  prompts: PromptSet;
  outbox: Outbox;
  conversations: ConversationLog;
  recorder: TurnRecorder;
  guardianConfig: GuardianConfig;
  logger: Logger;
  llmConfigured: boolean;
  /** Shadow mode: the notice is written and recorded, not sent. */
  shadowMode?: boolean;
  now?: () => Date;
  /** Handlers of other notification kinds (scheduled notices, admin alerts), by `payload.kind`. */
  kinds?: Record<string, (item: ClaimedItem) => Promise<void>>;
}

/**
 * Delivers `notification` work items (R-P2). A due reminder is written by the brain in the persona
 * (R-C4), checked by the Guardian's reply check, sent once (outbox key per reminder), kept in the room's
 * history and recorded as a turn. If the brain cannot write it, a persona template is used.
 */
export class NoticeRunner {
  constructor(private readonly d: NoticeRunnerDeps) {}

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

  async handle(item: ClaimedItem): Promise<void> {
    const payload = item.payload as { kind?: string; reminderId?: string };
    const kinds = this.d.kinds ?? {};
    const other =
      payload.kind && payload.kind !== 'reminder' && Object.hasOwn(kinds, payload.kind)
        ? kinds[payload.kind]
        : undefined;
    if (other) return other(item);
    if (payload.kind !== 'reminder' || !payload.reminderId) {
      this.d.logger.warn({ workItemId: String(item.id) }, 'unknown notification kind: ignored');
      return;
    }
    const started = performance.now();
    const r = await this.d.db.reminder.findUnique({ where: { id: payload.reminderId } });
    if (!r || r.status === 'sent' || r.status === 'cancelled') return;
    const member = await this.d.db.member.findUnique({
      where: { orgId_id: { orgId: r.orgId, id: r.memberId } },
      include: { accounts: { where: { platform: r.platform } } },
    });
    if (!member || !member.active) {
      await finishReminder(this.d.db, r.id, 'cancelled');
      return;
    }
    const account = member.accounts[0]?.accountId ?? member.id;
    const now = this.d.now?.() ?? new Date();
    const lang = detectLanguage(r.text);
    // The reminder text is stored text: one inert line inside the template's quotes (data, never instructions).
    const vars = { name: member.name, text: neutralise(r.text) };
    const msg: InboundMessage = {
      platform: r.platform as InboundMessage['platform'],
      orgId: r.orgId,
      roomId: r.roomId,
      senderAccountId: account,
      senderName: member.name,
      text: personaMessage(this.d.prompts, 'notice.reminder_task', lang, vars),
      rawText: '',
      mentions: [],
      platformMessageId: `reminder:${r.id}`,
      sentAt: now.toISOString(),
    };
    let text = personaMessage(this.d.prompts, 'notice.reminder_fallback', lang, vars);
    let calls: LlmCallRecord[] = [];
    let decider: 'LLM' | 'SYSTEM' = 'SYSTEM';
    if (this.d.llmConfigured) {
      try {
        const ctx = await this.d.contextBuilder.build({
          msg,
          now,
          room: { platform: r.platform, roomId: r.roomId, name: null, authority: 'member' },
          sender: {
            known: true,
            memberId: member.id,
            name: member.name,
            level: member.level,
            departmentId: member.departmentId,
            departmentName: null,
            title: member.title,
            preferences: {},
          },
        });
        const decision = await this.d.brain.decide({ ctx, tools: [], purpose: 'notice' });
        calls = decision.calls;
        if (decision.output.type === 'text_response') {
          text = decision.output.text;
          decider = 'LLM';
        }
      } catch (err) {
        this.d.logger.warn(
          { reminderId: r.id, err: (err as Error).name },
          'reminder written from the template (brain unavailable)',
        );
      }
    }
    const check = checkReplyText(text, this.d.guardianConfig);
    const finalText =
      check.action === 'BLOCK' ? personaMessage(this.d.prompts, 'reply.blocked_confidential', lang) : check.text;
    // queued → sending, conditionally: a reminder cancelled while the notice was being written is not sent,
    // and from here on cancel_reminder says it is already on its way.
    if (!(await claimReminderForSending(this.d.db, r.id))) return;
    const mentionAccountIds = await this.mentions(r, account);
    const sent = this.d.shadowMode
      ? { skipped: true, platformMessageId: undefined }
      : await this.d.outbox.send(
          `notice:reminder:${r.id}`,
          {
            platform: msg.platform,
            roomId: r.roomId,
            text: finalText,
            kind: 'notice',
            mentionAccountIds,
          },
          item,
        );
    await Promise.all([
      finishReminder(this.d.db, r.id, this.d.shadowMode ? 'shadow' : 'sent'),
      sent.skipped
        ? Promise.resolve()
        : this.d.conversations.append({
            orgId: r.orgId,
            platform: r.platform,
            roomId: r.roomId,
            accountId: account,
            text: finalText,
            platformMessageId: sent.platformMessageId ?? null,
            sentAt: now,
          }),
      this.d.recorder.record({
        orgId: r.orgId,
        platform: r.platform,
        roomId: r.roomId,
        accountId: account,
        memberId: member.id,
        workItemId: item.id,
        kind: 'notification',
        input: null,
        finalReply: finalText,
        decision: this.d.shadowMode ? 'SHADOW_NOTICE' : 'NOTICE',
        reasonCode: check.action === 'BLOCK' ? check.reasonCode : 'P_REMINDER',
        finalDecider: decider,
        totalMs: performance.now() - started,
        calls,
        guardianAction: check.action,
        guardianReason: check.reasonCode,
      }),
    ]);
  }
}
