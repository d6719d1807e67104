import type { InboundMessage, Platform } from '../core/chat';
import type { Brain } from '../brain/brain';
import type { LlmCallRecord } from '../core/llm-usage';
import type { ContextBuilder } from '../context/context-builder';
import type { ContextSection, SenderProfile } from '../context/types';
import { checkBrainOutputMeta, checkReplyText, type GuardianConfig } from '../guardian';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { TurnRecorder } from '../turn/turn-recorder';
import type { Outbox, WorkClaim } from '../queue/outbox';
import type { ConversationLog } from '../context/conversation-log';

export interface NoticeDeliveryDeps {
  brain: Pick<Brain, 'decide'>;
  /** A builder without optional sources: a notice's facts are given explicitly (and scoped to its reader). */
  contextBuilder: ContextBuilder;
  outbox: Outbox;
  conversations: ConversationLog;
  recorder: TurnRecorder;
  guardianConfig: GuardianConfig;
  logger: Logger;
  metrics?: Metrics;
  llmConfigured: boolean;
  shadowMode: boolean;
  now?: () => Date;
}

/** One proactive message to write and send (a scheduled notice or an admin alert). */
export interface NoticeRequest {
  /** Metric label, e.g. `daily_digest`, `admin_alert`. */
  kind: string;
  orgId: string;
  platform: Platform;
  roomId: string;
  /** The account the notice is for (history key and audit); `admin` for admin alerts. */
  accountId: string;
  memberId: string | null;
  /** Who the brain writes for (their level and name shape the text; never widens what the facts hold). */
  reader: SenderProfile;
  /** What to write, as the user turn the brain answers (a persona message). */
  instruction: string;
  /** The only data the notice may use, already scoped to its reader (none: the instruction holds all it needs). */
  facts?: ContextSection;
  /** Persona template used when the brain cannot write (no LLM, cost limit, failure). */
  fallback: string;
  outboxKey: string;
  /** Accounts the adapter mentions (from the directory, never from model text). */
  mentionAccountIds: string[];
  reasonCode: string;
  workItemId: bigint;
  /**
   * The notification item's claim: the notice is posted only while this worker still holds it (as replies
   * are), so a worker whose claim expired mid-notice never posts it beside the one that took the item over.
   */
  claim?: WorkClaim;
  /**
   * What to send instead when the Guardian blocks the written text (a reminder the person asked for: they are told it
   * cannot be shown); absent: nothing is sent.
   */
  whenBlocked?: string;
  /**
   * The last check before sending (a reminder cancelled while its notice was being written): false and nothing is
   * sent or recorded.
   */
  stillWanted?: () => Promise<boolean>;
}

/** A member as the reader a notice is written for (the brain sees their name, level and title). */
export function memberAsReader(
  m: { id: string; name: string; level: number; departmentId: string | null; title: string | null },
  departmentName: string | null = null,
): SenderProfile {
  return {
    known: true,
    memberId: m.id,
    name: m.name,
    level: m.level,
    departmentId: m.departmentId,
    departmentName,
    title: m.title,
    preferences: {},
  };
}

export type NoticeOutcome = 'sent' | 'blocked' | 'shadow' | 'duplicate' | 'withdrawn';

/**
 * Writes a proactive message with the brain in the persona (R-C4, seed 003 §17.5), checks it with the
 * Guardian's reply check, sends it once (outbox key), keeps it in the room's history and records it as a
 * turn. A text the Guardian blocks is not sent: it is recorded and counted (the reader gets nothing).
 */
export class NoticeDelivery {
  constructor(private readonly d: NoticeDeliveryDeps) {}

  async deliver(req: NoticeRequest): Promise<NoticeOutcome> {
    const started = performance.now();
    if (await this.d.outbox.delivered(req.outboxKey)) return this.count(req, 'duplicate');
    const now = this.d.now?.() ?? new Date();
    const written = await this.write(req, now);
    const check = checkReplyText(written.text, this.d.guardianConfig);
    const blocked = check.action === 'BLOCK';
    const text = blocked ? (req.whenBlocked ?? null) : check.text;
    if (req.stillWanted && !(await req.stillWanted())) return this.count(req, 'withdrawn');
    const outcome: NoticeOutcome = blocked ? 'blocked' : this.d.shadowMode ? 'shadow' : 'sent';
    if (blocked)
      this.d.logger.warn(
        { kind: req.kind, reasonCode: check.reasonCode, roomId: req.roomId },
        text === null ? 'notice blocked by the Guardian: not sent' : 'notice blocked by the Guardian: told instead',
      );
    if (text !== null && !this.d.shadowMode) {
      const res = await this.d.outbox.send(
        req.outboxKey,
        { platform: req.platform, roomId: req.roomId, text, kind: 'notice', mentionAccountIds: req.mentionAccountIds },
        req.claim,
      );
      if (res.skipped) return this.count(req, 'duplicate');
      await this.d.conversations.append({
        orgId: req.orgId,
        platform: req.platform,
        roomId: req.roomId,
        accountId: req.accountId,
        text,
        platformMessageId: res.platformMessageId ?? null,
        sentAt: now,
      });
    }
    await this.d.recorder.record({
      orgId: req.orgId,
      platform: req.platform,
      roomId: req.roomId,
      accountId: req.accountId,
      memberId: req.memberId,
      workItemId: req.workItemId,
      kind: 'notification',
      input: req.instruction,
      contextSummary: { sections: req.facts ? [req.facts.title] : [], facts: req.facts?.lines ?? [], notice: req.kind },
      model: written.model,
      outputType: written.outputType,
      reasoning: written.reasoning,
      confidence: written.confidence,
      finalReply: text,
      decision: blocked ? 'NOTICE_BLOCKED' : this.d.shadowMode ? 'SHADOW_NOTICE' : 'NOTICE',
      reasonCode: blocked ? check.reasonCode : req.reasonCode,
      finalDecider: blocked ? 'SYSTEM' : written.decider,
      totalMs: performance.now() - started,
      calls: written.calls,
      guardianAction: check.action,
      guardianReason: check.reasonCode,
      notes: { outbox: req.outboxKey, ...(written.error ? { brain: written.error } : {}) },
    });
    return this.count(req, outcome);
  }

  private async write(
    req: NoticeRequest,
    now: Date,
  ): Promise<{
    text: string;
    decider: 'LLM' | 'SYSTEM';
    calls: LlmCallRecord[];
    model: string | null;
    outputType: string | null;
    reasoning?: unknown;
    confidence?: unknown;
    error?: string;
  }> {
    const fallback = { text: req.fallback, decider: 'SYSTEM' as const, calls: [], model: null, outputType: null };
    if (!this.d.llmConfigured) return fallback;
    const msg: InboundMessage = {
      platform: req.platform,
      orgId: req.orgId,
      roomId: req.roomId,
      senderAccountId: req.accountId,
      senderName: req.reader.name,
      text: req.instruction,
      rawText: '',
      mentions: [],
      platformMessageId: `notice:${req.outboxKey}`,
      sentAt: now.toISOString(),
    };
    try {
      const ctx = await this.d.contextBuilder.build({
        msg,
        now,
        sender: req.reader,
        room: { platform: req.platform, roomId: req.roomId, name: null, authority: 'member' },
      });
      if (req.facts) ctx.sections.push(req.facts);
      const decision = await this.d.brain.decide({ ctx, tools: [], purpose: 'notice' });
      const out = decision.output;
      const meta = checkBrainOutputMeta(out.reasoning, out.confidence, this.d.guardianConfig);
      const base = {
        calls: decision.calls,
        model: decision.model,
        outputType: out.type,
        reasoning: out.reasoning,
        confidence: out.confidence,
      };
      if (out.type === 'text_response' && meta.action === 'ALLOW') return { ...base, text: out.text, decider: 'LLM' };
      return {
        ...base,
        text: req.fallback,
        decider: 'SYSTEM',
        error: meta.action === 'ALLOW' ? `unexpected ${out.type}` : meta.reasonCode,
      };
    } catch (err) {
      const calls = (err as { calls?: LlmCallRecord[] }).calls ?? [];
      this.d.logger.warn(
        { kind: req.kind, err: (err as Error).name },
        'notice written from the persona template (brain unavailable)',
      );
      return { ...fallback, calls, error: (err as { code?: string }).code ?? (err as Error).name };
    }
  }

  private count(req: NoticeRequest, outcome: NoticeOutcome): NoticeOutcome {
    this.d.metrics?.notices.inc({ kind: req.kind, outcome });
    return outcome;
  }
}
