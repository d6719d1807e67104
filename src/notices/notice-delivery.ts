import type { InboundMessage, Platform } from '../core/chat';
import { Steps, type Step } from '../core/steps';
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
import { HISHO } from '../observability/genai';
import { inSpan, stepWatch } from '../observability/tracing';

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
  /** Stored work items the notice quotes (a reminder's text, task titles): it may say them back (issue 40). */
  quoted?: readonly string[];
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

/** What the brain (or the persona template) wrote. */
interface Written {
  text: string;
  decider: 'LLM' | 'SYSTEM';
  calls: LlmCallRecord[];
  model: string | null;
  outputType: string | null;
  reasoning?: unknown;
  confidence?: unknown;
  error?: string;
}

/** A notice as its steps see it: the request, then what each step adds. */
interface Notice {
  req: NoticeRequest;
  /** `performance.now()` when delivery started (the record's `totalMs`). */
  started: number;
}
/** After `writeNotice`. */
interface WrittenNotice extends Notice {
  now: Date;
  written: Written;
}
/** After `checkNotice`: the Guardian's reply check, and what is sent (null: nothing). */
interface CheckedNotice extends WrittenNotice {
  check: ReturnType<typeof checkReplyText>;
  text: string | null;
}
/** After `sendNotice`. */
interface SentNotice extends CheckedNotice {
  outcome: NoticeOutcome;
}

/** One step of a notice (`core/steps.ts`): ends the delivery with its outcome, or goes on with `next`. */
type NoticeStep<In, Out = In> = Step<NoticeDeliveryDeps, In, Out, NoticeOutcome>;

/** 1 — A notice already sent under its outbox key is not written again. */
const notSentYet: NoticeStep<Notice> = async (n, d, next) =>
  (await d.outbox.delivered(n.req.outboxKey)) ? 'duplicate' : next(n);

/** 2 — The brain writes it in the persona (the persona template when it cannot). */
const writeNotice: NoticeStep<Notice, WrittenNotice> = async (n, d, next) => {
  const now = d.now?.() ?? new Date();
  return next({ ...n, now, written: await write(d, n.req, now) });
};

/** 3 — The Guardian's reply check (R-C4): a blocked text is not sent (`whenBlocked` is said instead, if given). */
const checkNotice: NoticeStep<WrittenNotice, CheckedNotice> = async (n, d, next) => {
  const check = checkReplyText(n.written.text, d.guardianConfig, n.req.quoted);
  return next({ ...n, check, text: check.action === 'BLOCK' ? (n.req.whenBlocked ?? null) : check.text });
};

/** 4 — The last look before sending: a notice withdrawn meanwhile is neither sent nor recorded. */
const stillWanted: NoticeStep<CheckedNotice> = async (n, _d, next) =>
  n.req.stillWanted && !(await n.req.stillWanted()) ? 'withdrawn' : next(n);

/** 5 — Sent once through the outbox (not in shadow mode) and kept in the room's history. */
const sendNotice: NoticeStep<CheckedNotice, SentNotice> = async (n, d, next) => {
  const { req, text } = n;
  const blocked = n.check.action === 'BLOCK';
  const outcome: NoticeOutcome = blocked ? 'blocked' : d.shadowMode ? 'shadow' : 'sent';
  if (blocked)
    d.logger.warn(
      { kind: req.kind, reasonCode: n.check.reasonCode, roomId: req.roomId },
      text === null ? 'notice blocked by the Guardian: not sent' : 'notice blocked by the Guardian: told instead',
    );
  if (text !== null && !d.shadowMode) {
    const res = await d.outbox.send(
      req.outboxKey,
      { platform: req.platform, roomId: req.roomId, text, kind: 'notice', mentionAccountIds: req.mentionAccountIds },
      req.claim,
    );
    if (res.skipped) return 'duplicate';
    await d.conversations.append({
      orgId: req.orgId,
      platform: req.platform,
      roomId: req.roomId,
      accountId: req.accountId,
      text,
      platformMessageId: res.platformMessageId ?? null,
      sentAt: n.now,
    });
  }
  return next({ ...n, outcome });
};

/** 6 — Recorded as a turn (blocked ones too: recorded and counted, the reader gets nothing). */
const recordNotice: NoticeStep<SentNotice, never> = async (n, d) => {
  const { req, written, check, text } = n;
  const blocked = check.action === 'BLOCK';
  await d.recorder.record({
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
    decision: blocked ? 'NOTICE_BLOCKED' : d.shadowMode ? 'SHADOW_NOTICE' : 'NOTICE',
    reasonCode: blocked ? check.reasonCode : req.reasonCode,
    finalDecider: blocked ? 'SYSTEM' : written.decider,
    totalMs: performance.now() - n.started,
    calls: written.calls,
    guardianAction: check.action,
    guardianReason: check.reasonCode,
    notes: { outbox: req.outboxKey, ...(written.error ? { brain: written.error } : {}) },
  });
  return n.outcome;
};

/** A notice's steps, in order. */
export const NOTICE_STEPS = Steps.of<NoticeDeliveryDeps, Notice, NoticeOutcome>()
  .then(notSentYet)
  .then(writeNotice)
  .then(checkNotice)
  .then(stillWanted)
  .then(sendNotice)
  .then(recordNotice);

/**
 * Writes a proactive message with the brain in the persona (R-C4, seed 003 §17.5), checks it with the
 * Guardian's reply check, sends it once (outbox key), keeps it in the room's history and records it as a
 * turn ({@link NOTICE_STEPS}). A text the Guardian blocks is not sent: it is recorded and counted (the reader gets
 * nothing).
 */
export class NoticeDelivery {
  constructor(private readonly d: NoticeDeliveryDeps) {}

  /** Delivers one notice; with tracing on, in a `notice` span of its own with a span per step. */
  deliver(req: NoticeRequest): Promise<NoticeOutcome> {
    return inSpan('notice', { attributes: { [HISHO.noticeKind]: req.kind } }, async (span) => {
      const start = { req, started: performance.now() };
      const end = () => Promise.reject(new Error('no notice outcome'));
      const outcome = await NOTICE_STEPS.run(start, this.d, end, stepWatch('notice'));
      span.set({ [HISHO.noticeOutcome]: outcome });
      this.d.metrics?.notices.inc({ kind: req.kind, outcome });
      return outcome;
    });
  }
}

/** The notice's text, written by the brain for its reader from the given facts; the template when it cannot. */
async function write(d: NoticeDeliveryDeps, req: NoticeRequest, now: Date): Promise<Written> {
  const fallback = { text: req.fallback, decider: 'SYSTEM' as const, calls: [], model: null, outputType: null };
  if (!d.llmConfigured) return fallback;
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
    const ctx = await d.contextBuilder.build({
      msg,
      now,
      sender: req.reader,
      room: { platform: req.platform, roomId: req.roomId, name: null, authority: 'member' },
    });
    if (req.facts) ctx.sections.push(req.facts);
    const decision = await d.brain.decide({ ctx, tools: [], purpose: 'notice' });
    const out = decision.output;
    const meta = checkBrainOutputMeta(out.reasoning, out.confidence, d.guardianConfig);
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
    d.logger.warn(
      { kind: req.kind, err: (err as Error).name },
      'notice written from the persona template (brain unavailable)',
    );
    return { ...fallback, calls, error: (err as { code?: string }).code ?? (err as Error).name };
  }
}
