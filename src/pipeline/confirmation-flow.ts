import { stripLeadingName } from '../adapters/addressee';
import type { InboundMessage } from '../adapters/types';
import { authorize, directoryFor, loadActor, loadDirectory, type Actor } from '../authorization';
import type { Brain } from '../brain/brain';
import { confirmedActionContinuation } from '../brain/continuation';
import { type PromptSet } from '../brain/prompts';
import { personaMessage } from '../core/messages';
import type { TurnContext } from '../context/types';
import type { Db } from '../db/prisma';
import type { Logger } from '../observability/logger';
import { classifyAnswer, isUrgent } from '../state/answer-parser';
import type { BrainStateManager } from '../state/brain-state-manager';
import type { SessionKey } from '../state/session-key';
import type { PendingActionView, SessionView } from '../state/types';
import { claimLostError, replyKeyOf, type ClaimedItem } from '../intake/work-queue';
import { renderEffect } from '../tools/describe';
import type { ToolExecutor } from '../tools/executor';
import type { ToolRegistry } from '../tools/registry';
import { confirmationOptions, pendingEffect, type ProposalStage } from './proposal-stage';
import type { TurnOutcome, TurnRunner } from './turn-runner';

export interface ConfirmationFlowDeps {
  db: Db;
  states: BrainStateManager;
  brain: Brain;
  registry: ToolRegistry;
  executor: ToolExecutor;
  stage: ProposalStage;
  prompts: PromptSet;
  logger: Logger;
  defaultUserLevel: number;
  /** Shadow mode: answers are recorded, nothing approved is executed. */
  shadowMode?: boolean;
  /** Names people address the bot by (persona names, platform display names): dropped before classifying. */
  botNames?: () => readonly string[];
}

/** What the confirmation layer decided for this message. */
export type ConfirmationStep =
  | { kind: 'handled'; outcome: TurnOutcome }
  /** Not an answer: continue the normal turn (with a note to prepend, or extra context for a change). */
  | { kind: 'continue'; prefix?: string; modifying?: PendingActionView };

/** One message that may answer a pending confirmation, with the turn it runs in. */
interface StepInput {
  msg: InboundMessage;
  session: SessionView;
  ctx: TurnContext;
  actor: Actor;
  turnRunner: TurnRunner;
  /** The work item of this turn: its reply asks the next question; its claim guards execution. */
  item: ClaimedItem;
}

/**
 * Answers to pending confirmations (R-S1–R-S4, seed 001 HITL): approval executes at most once (atomic
 * pending → approved → executed), after the AuthorizationGate checks again; denial cancels; a late
 * answer gets a note; a change request is re-proposed and confirmed again; an urgent new request
 * cancels; anything else gets a reminder and the pending action stays. An approval counts only for the
 * round whose question it answers: a double click or a second quick 「はい」 sent before the second
 * question was shown is asked again, never counted twice.
 */
export class ConfirmationFlow {
  constructor(private readonly d: ConfirmationFlowDeps) {}

  async step(input: StepInput): Promise<ConfirmationStep> {
    const { msg, session, ctx, turnRunner } = input;
    const lang = ctx.language;
    const p = this.d.prompts;
    // Only the deterministic classification reads the message without its addressee ("[To:9999]Hishoさん\n").
    const answer = classifyAnswer(stripLeadingName(msg.answerText ?? msg.text, this.d.botNames?.() ?? []));
    const key: SessionKey = { platform: msg.platform, roomId: msg.roomId, accountId: msg.senderAccountId };
    const pending = session.pending;
    const stale = msg.answerTo && (!pending || pending.id !== msg.answerTo);

    if (!pending && !stale && answer === 'approve') {
      const recent = await this.recentlyApproved(msg);
      if (recent) {
        // A 「はい」 again (a duplicate, or this turn retried after a crash): report instead of asking the model.
        if (recent.status === 'approved') return this.execute(input, recent, pendingEffect(recent, lang).summary);
        return this.handled(turnRunner, ctx, { decision: 'IGNORED', reasonCode: 'S_ALREADY_DECIDED', finalDecider: 'SYSTEM' }, personaMessage(p, 'confirm.already', lang));
      }
    }
    if (!pending || stale) {
      if ((session.expiredPending || stale) && (answer === 'approve' || answer === 'deny')) {
        return this.handled(turnRunner, ctx, { decision: 'EXPIRED', reasonCode: 'S_PENDING_EXPIRED', finalDecider: 'SYSTEM' }, personaMessage(p, 'confirm.expired', lang));
      }
      return { kind: 'continue' };
    }
    const effect = pendingEffect(pending, lang);
    const summary = effect.summary;
    if (answer === 'approve') {
      if (!(await this.answersThisRound(msg, pending))) return this.askAgain(input, pending);
      return this.approve(input, key, pending, summary);
    }
    if (answer === 'deny') {
      const r = await this.d.states.deny({ pendingId: pending.id, key });
      if (r.outcome === 'denied') return this.handled(turnRunner, ctx, { decision: 'CANCELLED', reasonCode: 'S_USER_DENIED', finalDecider: 'USER' }, personaMessage(p, 'confirm.cancelled', lang));
      return this.noDecision(turnRunner, ctx, r.outcome);
    }
    if (answer === 'modify') {
      await this.d.states.cancelPending(key, 'modified by the asker');
      return { kind: 'continue', modifying: pending };
    }
    if (isUrgent(msg.text)) {
      await this.d.states.cancelPending(key, 'urgent interruption');
      return { kind: 'continue', prefix: personaMessage(p, 'confirm.urgent_cancelled', lang, { summary }) };
    }
    return this.remind(input, pending, 'S_PENDING_REMINDER');
  }

  /** The pending question again, with the round's buttons: 「さっきの確認がまだ…」. */
  private remind(input: StepInput, pending: PendingActionView, reasonCode: string): ConfirmationStep {
    const { ctx, turnRunner } = input;
    const lang = ctx.language;
    const summary = renderEffect(pendingEffect(pending, lang));
    const text = personaMessage(this.d.prompts, 'confirm.reminder', lang, { summary });
    return this.handled(turnRunner, ctx, { decision: 'REMINDER', reasonCode, finalDecider: 'SYSTEM' }, text,
      confirmationOptions(this.d.prompts, lang, pending.id, pending.confirmationsGiven));
  }

  /**
   * True when an approval answers the question of the pending action's current round: a button names its
   * round; a text answer must have been sent after that round's question was delivered.
   */
  private async answersThisRound(msg: InboundMessage, pending: PendingActionView): Promise<boolean> {
    if (msg.answerRound !== undefined) return msg.answerRound === pending.confirmationsGiven;
    if (!pending.questionKey) return true;
    const shownAt = await this.d.states.questionShownAt(pending.questionKey);
    return shownAt !== null && new Date(msg.sentAt).getTime() >= shownAt.getTime();
  }

  /** An approval sent before this round's question was shown: that question again, nothing counted. */
  private askAgain(input: StepInput, pending: PendingActionView): ConfirmationStep {
    if (pending.confirmationsGiven === 0) return this.remind(input, pending, 'S_ANSWER_BEFORE_QUESTION');
    return this.secondQuestion(input, pending, 'S_ANSWER_BEFORE_QUESTION');
  }

  /** 「念のため、もう一度確認するウル」 with the effect restated and the second round's buttons. */
  private secondQuestion(input: StepInput, pending: PendingActionView, reasonCode: string): ConfirmationStep {
    const { ctx, turnRunner } = input;
    const p = this.d.prompts;
    const lang = ctx.language;
    const ja = pending.proposal.guardianNote;
    const en = pending.proposal.guardianNoteEn;
    const jaNote = typeof ja === 'string' ? `（${ja}）\n` : '';
    const note = lang === 'ja' ? jaNote : (typeof en === 'string' ? `(Note: ${en}.)\n` : '');
    const summary = renderEffect(pendingEffect(pending, lang));
    const text = personaMessage(p, 'confirm.second', lang, { summary, note });
    const record = { decision: 'CONFIRM', reasonCode, finalDecider: 'SYSTEM' as const, guardianAction: 'CONFIRM' };
    return this.handled(turnRunner, ctx, record, text, confirmationOptions(p, lang, pending.id, 1));
  }

  private async approve(
    input: StepInput, key: SessionKey, pending: PendingActionView, summary: string,
  ): Promise<ConfirmationStep> {
    const { ctx, turnRunner } = input;
    // This turn's reply asks the second question (if one is needed): answers count only once it was delivered.
    const r = await this.d.states.approve({
      pendingId: pending.id, key, expectedConfirmations: pending.confirmationsGiven,
      questionKey: replyKeyOf(input.item),
    });
    if (r.outcome === 'needs_second') return this.secondQuestion(input, r.action ?? pending, 'S_SECOND_CONFIRMATION');
    if (r.outcome !== 'approved') return this.noDecision(turnRunner, ctx, r.outcome);
    return this.execute(input, pending, summary);
  }

  /** The session's action approved or executed in the last two minutes (duplicate or retried answers). */
  private async recentlyApproved(msg: InboundMessage): Promise<PendingActionView | null> {
    const row = await this.d.db.pendingAction.findFirst({
      where: { platform: msg.platform, roomId: msg.roomId, accountId: msg.senderAccountId, status: { in: ['approved', 'executed'] }, decidedAt: { gte: new Date(Date.now() - 120_000) } },
      orderBy: { decidedAt: 'desc' }, select: { id: true },
    });
    return row ? this.d.states.findPendingById(row.id) : null;
  }

  /** Runs an approved action: the gate decides again, the handler runs once, the brain reports. */
  private async execute(input: StepInput, pending: PendingActionView, summary: string): Promise<ConfirmationStep> {
    const { ctx, turnRunner, msg, item } = input;
    const p = this.d.prompts;
    const lang = ctx.language;
    if (this.d.shadowMode) {
      await this.d.states.markFailed(pending.id, 'shadow mode: not executed');
      return this.handled(turnRunner, ctx, { decision: 'CANCELLED', reasonCode: 'S_SHADOW_NOT_EXECUTED', finalDecider: 'SYSTEM' }, personaMessage(p, 'confirm.cancelled', lang));
    }

    // Permissions may have changed since the question was asked: the gate decides again, from the database.
    const proposal = pending.proposal;
    const tool = this.d.registry.meta(proposal.toolName);
    const actor = await loadActor(this.d.db, { orgId: ctx.org.id, platform: msg.platform, roomId: msg.roomId, accountId: msg.senderAccountId, defaultLevel: this.d.defaultUserLevel, fallbackAuthority: msg.roomAuthority })
      .catch(() => null);
    const load = async () => directoryFor(this.d.db, ctx.org.id, await loadDirectory(this.d.db, ctx.org.id), tool, proposal);
    const directory = actor ? await load().catch(() => null) : null;
    const auth = actor && directory ? authorize({ actor, tool, proposal, directory }) : { result: 'DENIED' as const, reasonCode: 'Z_LOOKUP_ERROR', reason: 'lookup failed' };
    const record = { guardianAction: 'CONFIRM', guardianReason: pending.reasonCode, authResult: auth.result, authReason: auth.reasonCode, proposals: [{ tool: proposal.toolName, parameters: proposal.parameters, pendingActionId: pending.id }] };
    if (auth.result === 'DENIED' || !actor) {
      await this.d.states.markFailed(pending.id, `denied at execution: ${auth.reasonCode}`);
      return this.handled(turnRunner, ctx, { ...record, decision: 'DENIED', reasonCode: auth.reasonCode, finalDecider: 'SYSTEM' }, personaMessage(p, 'confirm.denied_now', lang));
    }
    if (item.claimLost) throw claimLostError();
    // Keyed by the pending action: a retried turn, or another worker that took the item over, does it once.
    const toolCtx = this.d.stage.toolContext(ctx, actor, `pending:${pending.id}`, item);
    const exec = await this.d.executor.run(proposal.toolName, proposal.parameters, toolCtx);
    if (exec.status === 'ok') await this.d.states.markExecuted(pending.id, exec.output);
    else await this.d.states.markFailed(pending.id, exec.status === 'error' ? exec.code : exec.status);
    const execution = { status: exec.status, ms: exec.ms, ...(exec.status === 'internal_error' ? { errorId: exec.errorId } : {}) };
    if (exec.status === 'clarify') {
      const question = lang === 'en' && exec.questionEn ? exec.questionEn : exec.question;
      return this.handled(turnRunner, ctx, { ...record, decision: 'CLARIFY', reasonCode: 'T_CLARIFICATION', finalDecider: 'USER', execution }, question, exec.options.map((label, i) => ({ answer: String(i + 1), label })));
    }
    // The brain writes the report from the sanitised result (R-C4); a template if it cannot.
    const continuation = confirmedActionContinuation({
      proposal, reasoning: pending.reasoning, confidence: pending.confidence, summary,
      result: this.d.stage.resultBlock(proposal, exec),
      note: 'The person confirmed this action; it has now run. Report the result with the reply tool.',
    });
    const base = { ...record, decision: exec.status === 'ok' ? 'EXECUTED' : 'ERROR', reasonCode: exec.status === 'ok' ? 'S_USER_APPROVED' : 'T_TOOL_FAILED', finalDecider: 'USER' as const, execution };
    try {
      const decision = await this.d.brain.decide({ ctx, tools: [], continuation, purpose: 'report_confirmed' });
      if (decision.output.type !== 'tool_call') return { kind: 'handled', outcome: turnRunner.answerOutput(ctx, decision.output, decision.calls, { ...base, model: decision.model }) };
    } catch (err) {
      this.d.logger.warn({ err: (err as Error).name }, 'report of a confirmed action fell back to the template');
    }
    const text = exec.status === 'ok' ? personaMessage(p, 'confirm.executed', lang, { summary }) : personaMessage(p, 'confirm.failed', lang, { errorId: exec.status === 'internal_error' ? exec.errorId : '-' });
    return this.handled(turnRunner, ctx, base, text);
  }

  private noDecision(turnRunner: TurnRunner, ctx: TurnContext, outcome: string): ConfirmationStep {
    const lang = ctx.language;
    if (outcome === 'expired') return this.handled(turnRunner, ctx, { decision: 'EXPIRED', reasonCode: 'S_PENDING_EXPIRED', finalDecider: 'SYSTEM' }, personaMessage(this.d.prompts, 'confirm.expired', lang));
    if (outcome === 'not_yours') return this.handled(turnRunner, ctx, { decision: 'IGNORED', reasonCode: 'S_NOT_YOURS', finalDecider: 'SYSTEM' }, personaMessage(this.d.prompts, 'confirm.not_yours', lang));
    return this.handled(turnRunner, ctx, { decision: 'IGNORED', reasonCode: 'S_ALREADY_DECIDED', finalDecider: 'SYSTEM' }, personaMessage(this.d.prompts, 'confirm.already', lang));
  }

  private handled(turnRunner: TurnRunner, ctx: TurnContext, record: TurnOutcome['record'], text: string, options?: TurnOutcome['options']): ConfirmationStep {
    return { kind: 'handled', outcome: turnRunner.finalText(ctx, [], record, text, options) };
  }
}
