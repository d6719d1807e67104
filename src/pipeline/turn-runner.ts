import type { FoundMessage, InboundMessage, OutboundReply, ReplyOption } from '../adapters/types';
import { audienceOf, type Actor } from '../authorization';
import { BrainFailure, type Brain, type BrainDecision } from '../brain/brain';
import { type LlmCallRecord } from '../core/llm-usage';
import { detectLanguage } from '../core/language';
import { type PromptSet } from '../brain/prompts';
import { personaMessage } from '../core/messages';
import type { BrainOutput } from '../core/proposal';
import type { ContextBuilder } from '../context/context-builder';
import type { SenderProfile, TurnContext } from '../context/types';
import type { Db } from '../db/prisma';
import { randomUUID } from 'node:crypto';
import { AppError, asAppError } from '../errors/app-error';
import { checkBrainOutputMeta, checkReplyText, type GuardianConfig } from '../guardian';
import { replyKeyOf, type ClaimedItem } from '../intake/work-queue';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { TurnRecordInput, TurnRecorder } from '../observability/turn-recorder';
import type { BrainStateManager } from '../state/brain-state-manager';
import { END_FLOW_AT, SUGGEST_RESTART_AT } from '../state/clarification-budget';
import type { SessionKey } from '../state/session-key';
import type { PendingActionView, SessionView } from '../state/types';
import type { ConfirmationFlow } from './confirmation-flow';
import { mayHavePosted, type Outbox } from './outbox';
import { turnFinish, turnPrelude, type TurnPrelude } from './turn-sql';
import { sqlRunner, type Sql } from '../db/sql';
import type { ToolStage } from './tool-stage';
import type { SenderBudget } from '../brain/sender-budget';

export interface TurnRunnerDeps {
  db: Db;
  brain: Brain;
  contextBuilder: ContextBuilder;
  recorder: TurnRecorder;
  outbox: Outbox;
  prompts: PromptSet;
  logger: Logger;
  metrics?: Metrics;
  guardianConfig: GuardianConfig;
  defaultUserLevel: number;
  shadowMode: boolean;
  /** False when no ANTHROPIC_API_KEY: the bot answers with a setup hint instead of thinking. */
  llmConfigured: boolean;
  /** Proposals → Guardian → AuthorizationGate → executor (absent: every proposal is blocked). */
  toolStage?: ToolStage;
  /** Session state and pending confirmations (absent: every turn is a fresh NORMAL turn). */
  states?: BrainStateManager;
  /** Per-sender budgets, checked before anything else (absent: no per-sender limit). */
  senderBudget?: SenderBudget;
  confirmations?: ConfirmationFlow;
  /** Raw SQL for the turn's combined first and last statements (defaults to running through Prisma). */
  sql?: Sql;
  now?: () => Date;
}

/** The outcome of the decision part of a turn: what to say and what to record. */
export interface TurnOutcome {
  text: string;
  title?: string;
  options?: ReplyOption[];
  record: Partial<TurnRecordInput> & Pick<TurnRecordInput, 'decision' | 'reasonCode' | 'finalDecider'>;
  calls: LlmCallRecord[];
  /** Recorded but not sent (a repeated over-budget message: the sender was already told once). */
  silent?: boolean;
}

/**
 * One user message through the brain (SPEC §2): sender → context → brain → Guardian (→ tools) → reply →
 * audit record. Brain/LLM failures end in a persona error reply; infrastructure failures are retried by
 * the work queue and, on the last attempt, still answered (nothing is silently lost).
 */
export class TurnRunner {
  private readonly sql: Sql;

  constructor(private readonly d: TurnRunnerDeps) {
    this.sql = d.sql ?? sqlRunner(d.db);
  }

  private now(): Date {
    return this.d.now?.() ?? new Date();
  }

  async handleUserRequest(item: ClaimedItem): Promise<void> {
    const msg = item.payload as InboundMessage;
    const started = performance.now();
    const replyKey = replyKeyOf(item);
    const turnId = randomUUID();
    const log = this.d.logger.child({ turnId, workItemId: String(item.id), platform: msg.platform, roomId: msg.roomId });
    try {
      // A retry after a crash that happened after the reply went out: nothing more to do.
      if (item.attempts > item.maxAttempts) {
        // Every allowed attempt died mid-turn (a crash, not an error): only tell the person, do not think again.
        const abandoned = new AppError('INTERNAL', 'turn abandoned after repeated worker crashes');
        await this.answerFailure(msg, replyKey, abandoned, log, item);
        return;
      }
      const prelude = await turnPrelude(this.sql, msg, replyKey, { defaultLevel: this.d.defaultUserLevel, now: this.now() });
      // A retry after a crash that happened after the reply went out: nothing more to do.
      if (prelude.alreadySent) return;
      if (mayHavePosted(prelude.prior)) {
        // An earlier attempt may have posted the answer (a crash between posting and recording it, or a post that
        // timed out): look for it in the room before thinking, let alone posting, again.
        const since = prelude.prior!.createdAt;
        const found = await this.d.outbox.reconcile(replyKey, this.replyTo(msg, ''), since);
        if (found) {
          log.warn({ platformMessageId: found.platformMessageId }, 'earlier answer found in the room: not posted');
          const record = {
            decision: 'DELIVERED_EARLIER', reasonCode: 'O_RECONCILED', finalDecider: 'SYSTEM' as const,
            memberId: prelude.actor.memberId,
          };
          const outcome: TurnOutcome = { text: found.text ?? '', calls: [], record };
          await this.finish(msg, item, outcome, started, replyKey, log, turnId, found);
          return;
        }
      }
      const outcome = await this.decide(msg, item, log, prelude);
      await this.finish(msg, item, outcome, started, replyKey, log, turnId);
    } catch (err) {
      const app = asAppError(err, 'DB_UNAVAILABLE');
      const lastAttempt = item.attempts >= item.maxAttempts;
      log.error({ errorId: app.errorId, code: app.code, attempt: item.attempts, lastAttempt, err: app.message }, 'turn failed');
      this.d.metrics?.errors.inc({ code: app.code });
      if ((err as Error).name === 'ClaimLostError') throw err;
      if (!lastAttempt) throw Object.assign(app, { retryable: true });
      await this.answerFailure(msg, replyKey, app, log, item);
    }
  }

  /** Everything between "message stored" and "reply ready". */
  private async decide(msg: InboundMessage, item: ClaimedItem, log: Logger, prelude: TurnPrelude): Promise<TurnOutcome> {
    const lang = detectLanguage(msg.answerText ?? msg.text);
    const key: SessionKey = { platform: msg.platform, roomId: msg.roomId, accountId: msg.senderAccountId };
    const { actor, profile } = prelude;
    const refusal = await this.beforeThinking(msg, actor, lang);
    if (refusal) return refusal;
    if (!this.d.llmConfigured) {
      return { text: personaMessage(this.d.prompts, 'error.LLM_NOT_CONFIGURED', lang), calls: [], record: { decision: 'ERROR', reasonCode: 'LLM_NOT_CONFIGURED', finalDecider: 'SYSTEM', errorCategory: 'SYSTEM', memberId: actor.memberId } };
    }
    let session: SessionView | null = null;
    if (this.d.states) {
      try {
        // A plainly NORMAL session came with the prelude; pending or expired ones need the state manager.
        session = prelude.quickSession ?? (await this.d.states.getSession(key));
      } catch (err) {
        // Session state is the one context source that fails the turn (R-X2): without it an answer could be misread.
        const app = asAppError(err, 'SESSION_STATE_UNAVAILABLE');
        log.error({ errorId: app.errorId, err: app.message }, 'session state unavailable; nothing executed');
        return { text: personaMessage(this.d.prompts, 'error.SESSION_STATE_UNAVAILABLE', lang, { errorId: app.errorId }), calls: [], record: { decision: 'ERROR', reasonCode: 'SESSION_STATE_UNAVAILABLE', finalDecider: 'SYSTEM', errorId: app.errorId, errorCategory: 'SYSTEM', memberId: actor.memberId } };
      }
    }
    const sender = this.senderProfile(msg, actor, profile);
    const room = { platform: msg.platform, roomId: msg.roomId, name: null, authority: actor.roomAuthority };
    const ctx = await this.d.contextBuilder.build({ msg, sender, room, audience: audienceOf(actor), now: this.now() });
    let prefix: string | undefined;
    let modifying: PendingActionView | undefined;
    if (session && this.d.confirmations) {
      const step = await this.d.confirmations.step({ msg, session, ctx, actor, turnRunner: this, item });
      if (step.kind === 'handled') return step.outcome;
      prefix = step.prefix;
      if (step.modifying) {
        const m = step.modifying;
        modifying = m;
        ctx.sections.push({ title: '保留中の操作（この人が変更を求めています）', lines: [
          `${String(m.proposal.summary ?? m.proposal.toolName)}`,
          `tool: ${m.proposal.toolName} / parameters: ${JSON.stringify(m.proposal.parameters)}`,
          personaMessage(this.d.prompts, 'confirm.modify_hint', 'en'),
        ] });
      }
    }
    let outcome = await this.think(ctx, actor, item, log, modifying);
    if (session) {
      outcome = await this.applyClarificationBudget(key, session, outcome, ctx.language);
      await this.trackErrors(key, session, outcome);
    }
    if (prefix) outcome = { ...outcome, text: `${prefix}\n${outcome.text}` };
    return outcome;
  }

  /**
   * Turns answered without the model (issue 8): a sender over a per-sender budget (the polite reply once
   * per window, then silence), and a stranger — not in the directory, in a DM or an unlisted room — who
   * is told that the bot serves members, without context, tools or an LLM call.
   */
  private async beforeThinking(msg: InboundMessage, actor: Actor, lang: 'ja' | 'en'): Promise<TurnOutcome | null> {
    const budget = await this.d.senderBudget?.check(msg);
    if (budget && !budget.ok) {
      this.d.metrics?.senderBudgetRefusals.inc({ limit: budget.limit });
      const key = budget.limit === 'minute' ? 'reply.sender_budget_minute' : 'reply.sender_budget_day';
      return {
        text: personaMessage(this.d.prompts, key, lang), calls: [], silent: !budget.notify,
        record: {
          decision: 'REFUSED', reasonCode: budget.reasonCode, finalDecider: 'SYSTEM', memberId: actor.memberId,
          notes: { notified: budget.notify },
        },
      };
    }
    if (actor.source !== 'stranger') return null;
    this.d.metrics?.strangerTurns.inc({ platform: msg.platform });
    return {
      text: personaMessage(this.d.prompts, 'reply.stranger', lang), calls: [],
      record: {
        decision: 'REFUSED', reasonCode: 'Z_STRANGER', finalDecider: 'SYSTEM', memberId: null,
        authResult: 'DENIED', authReason: 'Z_STRANGER',
      },
    };
  }

  /** The brain's decision and what becomes of it (a brain failure becomes a persona error reply). */
  private async think(
    ctx: TurnContext, actor: Actor, item: ClaimedItem, log: Logger, modifying?: PendingActionView,
  ): Promise<TurnOutcome> {
    let decision: BrainDecision;
    try {
      decision = await this.d.brain.decide({ ctx, tools: this.d.toolStage?.toolsFor(actor) ?? [] });
    } catch (err) {
      return this.brainFailure(err, ctx, actor, log);
    }
    const base = this.baseRecord(ctx, actor, decision);
    if (decision.output.type !== 'tool_call') return this.answerOutput(ctx, decision.output, decision.calls, base);
    if (this.d.toolStage) return this.d.toolStage.run({ ctx, actor, decision, item, turnRunner: this, modifying });
    return this.finalText(ctx, decision.calls, { ...base, decision: 'BLOCK', reasonCode: 'G_UNKNOWN_TOOL', finalDecider: 'SYSTEM', guardianAction: 'BLOCK', guardianReason: 'G_UNKNOWN_TOOL' },
      personaMessage(this.d.prompts, 'error.PERMISSION_DENIED', ctx.language));
  }

  /** Consecutive errors move the session to ERROR_RECOVERY (state manager); a good turn clears them. */
  private async trackErrors(key: SessionKey, session: SessionView, outcome: TurnOutcome): Promise<void> {
    const states = this.d.states;
    if (!states) return;
    if (outcome.record.decision === 'ERROR') await states.recordError(key, outcome.record.reasonCode);
    else if (session.errorCount > 0 || session.mode === 'ERROR_RECOVERY') await states.recordSuccess(key, { lastTool: undefined });
  }

  /** R-S5: after 3 clarification rounds suggest starting over; after 4 end the flow. */
  private async applyClarificationBudget(key: SessionKey, session: SessionView, outcome: TurnOutcome, lang: 'ja' | 'en'): Promise<TurnOutcome> {
    const states = this.d.states!;
    if (outcome.record.decision !== 'CLARIFY') {
      if (session.clarificationRounds > 0) await states.resetClarification(key);
      return outcome;
    }
    const rounds = await states.bumpClarification(key);
    if (rounds >= END_FLOW_AT) {
      await states.resetClarification(key);
      return { ...outcome, text: personaMessage(this.d.prompts, 'clarify.ended', lang), options: undefined, record: { ...outcome.record, decision: 'ENDED', reasonCode: 'S_CLARIFICATION_LOOP_ENDED', finalDecider: 'SYSTEM' } };
    }
    if (rounds >= SUGGEST_RESTART_AT) return { ...outcome, text: `${outcome.text}\n${personaMessage(this.d.prompts, 'clarify.restart', lang)}`, record: { ...outcome.record, notes: { ...(outcome.record.notes ?? {}), clarificationRounds: rounds } } };
    return outcome;
  }

  /** Text and clarification outputs: constitution check, then the reply text check. */
  answerOutput(ctx: TurnContext, output: Exclude<BrainOutput, { type: 'tool_call' }>, calls: LlmCallRecord[], base: Partial<TurnRecordInput>): TurnOutcome {
    const meta = checkBrainOutputMeta(output.reasoning, output.confidence, this.d.guardianConfig);
    if (meta.action === 'BLOCK' && meta.reasonCode.startsWith('G_CONSTITUTION')) {
      this.d.metrics?.constitutionViolations.inc({ reason_code: meta.reasonCode });
      this.d.logger.error({ alert: 'constitution_violation', reasonCode: meta.reasonCode, roomId: ctx.room.roomId }, 'ADMIN ALERT: constitution violation in a brain answer');
    }
    if (meta.action === 'BLOCK') {
      return this.finalText(ctx, calls, { ...base, decision: 'BLOCK', reasonCode: meta.reasonCode, finalDecider: 'SYSTEM', guardianAction: 'BLOCK', guardianReason: meta.reasonCode, notes: { constitution: meta.reason } },
        personaMessage(this.d.prompts, 'error.LLM_INVALID_OUTPUT', ctx.language, { errorId: '-' }));
    }
    const text = output.type === 'text_response' ? output.text : output.question;
    const options = output.type === 'clarification_needed' ? output.options.slice(0, 9).map((label, i) => ({ answer: String(i + 1), label })) : undefined;
    const clarify = output.type === 'clarification_needed';
    // A tool turn's summary (EXECUTED, DENIED, …) wins over the plain reply labels.
    return this.finalText(ctx, calls, {
      ...base,
      decision: base.decision ?? (clarify ? 'CLARIFY' : 'REPLY'),
      reasonCode: base.reasonCode ?? (clarify ? 'B_CLARIFICATION' : 'B_TEXT_RESPONSE'),
      finalDecider: base.finalDecider ?? 'LLM',
    }, text, options);
  }

  /** Every text the user will see passes the Guardian's reply check here (R-C4). */
  finalText(ctx: TurnContext, calls: LlmCallRecord[], record: TurnOutcome['record'], text: string, options?: ReplyOption[], title?: string): TurnOutcome {
    const check = checkReplyText(text, this.d.guardianConfig);
    if (check.action === 'BLOCK') {
      return {
        text: personaMessage(this.d.prompts, 'reply.blocked_confidential', ctx.language),
        calls,
        record: { ...record, decision: 'BLOCK', reasonCode: check.reasonCode, finalDecider: 'SYSTEM', guardianAction: 'BLOCK', guardianReason: check.reasonCode, notes: { ...(record.notes ?? {}), blockedReply: true } },
      };
    }
    const safeOptions = options?.map((o) => ({ ...o, label: checkReplyText(o.label, this.d.guardianConfig).action === 'BLOCK' ? '—' : checkReplyText(o.label, this.d.guardianConfig).text }));
    return { text: check.text, options: safeOptions, title, calls, record: { ...record, notes: { ...(record.notes ?? {}), replyCheck: check.reasonCode } } };
  }

  baseRecord(ctx: TurnContext, actor: Actor, decision: BrainDecision): Partial<TurnRecordInput> {
    return {
      memberId: actor.memberId,
      model: decision.model,
      outputType: decision.output.type,
      reasoning: decision.output.reasoning,
      confidence: decision.output.confidence,
      contextSummary: { historyTurns: ctx.history.length, summary: ctx.summary !== null, sections: ctx.sections.map((s) => s.title), degraded: ctx.degraded, policies: ctx.policies.length, language: ctx.language },
      notes: decision.retries.length > 0 ? { retries: decision.retries } : undefined,
    };
  }

  private brainFailure(err: unknown, ctx: TurnContext, actor: Actor, log: Logger): TurnOutcome {
    const app = asAppError(err, 'LLM_UNAVAILABLE');
    const calls = err instanceof BrainFailure ? err.calls : [];
    const retries = err instanceof BrainFailure ? err.retries : [];
    log.warn({ errorId: app.errorId, code: app.code, err: app.message }, 'brain failed; answering with a persona error message');
    this.d.metrics?.errors.inc({ code: app.code });
    const text = personaMessage(this.d.prompts, `error.${app.code}`, ctx.language, { errorId: app.errorId });
    return this.finalText(ctx, calls, {
      memberId: actor.memberId, decision: 'ERROR', reasonCode: app.code, finalDecider: 'SYSTEM', errorId: app.errorId, errorCategory: app.category,
      contextSummary: { degraded: ctx.degraded }, notes: { retries, error: app.message },
    }, text);
  }

  private async finish(
    msg: InboundMessage, item: ClaimedItem, outcome: TurnOutcome, started: number, replyKey: string, log: Logger,
    turnId: string, delivered?: FoundMessage,
  ): Promise<void> {
    let sent: { text: string; platformMessageId?: string } | null = null;
    const shadow = this.d.shadowMode;
    if (!shadow && !outcome.silent) {
      // Posted (or found posted by an earlier attempt) and marked sent at once: a retry must not post the answer again.
      const reply = { ...this.replyTo(msg, outcome.text), title: outcome.title, options: outcome.options };
      const res = delivered ?? await this.d.outbox.deliver(replyKey, reply, item);
      sent = { text: outcome.text, platformMessageId: res.platformMessageId };
    }
    const turn = this.d.recorder.prepare({
      id: turnId, orgId: msg.orgId, platform: msg.platform, roomId: msg.roomId, accountId: msg.senderAccountId, memberId: null, workItemId: item.id,
      input: msg.text, finalReply: outcome.text, totalMs: performance.now() - started, calls: outcome.calls,
      ...outcome.record,
      decision: shadow ? `SHADOW_${outcome.record.decision}` : outcome.record.decision,
    });
    // The turn's writes and the work item's completion go out as one statement.
    const history = outcome.silent ? null : { text: outcome.text, options: outcome.options, at: this.now() };
    const { completed } = await turnFinish(this.sql, { msg, sent, history, turn, item });
    item.completed = completed;
    turn.observe();
    log.info({ decision: outcome.record.decision, reasonCode: outcome.record.reasonCode, ms: Math.round(performance.now() - started) }, 'turn done');
  }

  /** The answer to `msg`: threaded to it, mentioning the asker. */
  private replyTo(msg: InboundMessage, text: string): OutboundReply {
    return {
      platform: msg.platform, roomId: msg.roomId, text, kind: 'reply',
      inReplyTo: {
        platformMessageId: msg.platformMessageId, accountId: msg.senderAccountId, accountName: msg.senderName,
      },
    };
  }

  /** Last-attempt failure: tell the user (best effort), so a message is never silently dropped. */
  private async answerFailure(
    msg: InboundMessage, replyKey: string, app: AppError, log: Logger, item: ClaimedItem,
  ): Promise<void> {
    const lang = detectLanguage(msg.answerText ?? msg.text);
    const text = personaMessage(this.d.prompts, `error.${app.code}`, lang, { errorId: app.errorId });
    try {
      await this.d.outbox.send(replyKey, this.replyTo(msg, text), item);
    } catch (err) {
      log.error({ errorId: app.errorId, err: asAppError(err).message }, 'could not deliver the failure reply');
    }
    await this.d.recorder.record({
      orgId: msg.orgId, platform: msg.platform, roomId: msg.roomId, accountId: msg.senderAccountId, memberId: null, input: msg.text,
      finalReply: text, decision: 'ERROR', reasonCode: app.code, finalDecider: 'SYSTEM', errorId: app.errorId, errorCategory: app.category, totalMs: 0,
    }).catch(() => undefined);
  }

  private senderProfile(msg: InboundMessage, actor: Actor, details: { title: string | null; preferences: unknown; departmentName: string | null } | null): SenderProfile {
    const known = actor.memberId ? details : null;
    return {
      known: actor.known, memberId: actor.memberId, name: actor.name ?? msg.senderName ?? `user ${msg.senderAccountId}`,
      level: actor.level, departmentId: actor.departmentId, departmentName: known?.departmentName ?? null, title: known?.title ?? null,
      preferences: (known?.preferences as Record<string, unknown> | null) ?? {},
    };
  }
}

export type { AppError };
