import { stripLeadingName } from '../core/addressee';
import type { InboundMessage, ReplyOption } from '../core/chat';
import { authorizeWithLookup, type Actor, type AuthDecision, type Directory } from '../authorization';
import type { Brain } from '../brain/brain';
import { confirmedActionContinuation } from '../brain/continuation';
import type { PromptSet } from '../brain/prompts';
import type { Language } from '../core/language';
import { personaMessage } from '../core/messages';
import type { TurnContext } from '../context/types';
import type { Db } from '../db/prisma';
import { ClaimLostError, replyKeyOf, type ClaimedItem } from '../queue/work-queue';
import type { Logger } from '../observability/logger';
import { classifyAnswer, isUrgent } from '../confirmations/answer-parser';
import type { PendingActions } from '../confirmations/pending-actions';
import type { SessionKey } from '../confirmations/session-key';
import type { NoDecision, PendingActionView, SessionView } from '../confirmations/types';
import type { ToolExecutor } from '../tools/executor';
import { GEN_AI, GEN_AI_OPERATION, HISHO, spanName } from '../observability/genai';
import { valueAttribute } from '../observability/span-content';
import { captureContent, inSpan } from '../observability/tracing';
import type { ToolRegistry } from '../tools/registry';
import {
  answerState,
  confirmationOptions,
  decidedAnswerText,
  doneSummary,
  pendingEffect,
  reminderText,
  secondQuestionText,
} from '../confirmations/confirmation-text';
import { toolResult, type ProposalStage } from './proposal-stage';
import type { ToolContexts } from './tool-services';
import {
  numberedOptions,
  type DecisionKind,
  type GuardianOutcome,
  type ReasonCode,
  type TurnDecision,
} from './turn-decision';

export interface ConfirmationFlowDeps {
  db: Db;
  /** The pending actions (their one writer): open, approve, deny, cancel, expire. */
  pending: PendingActions;
  brain: Pick<Brain, 'decide'>;
  registry: ToolRegistry;
  executor: ToolExecutor;
  contexts: ToolContexts;
  /** Writes the report of a confirmed action (the constitution check on the brain's answer). */
  stage: Pick<ProposalStage, 'answer'>;
  prompts: PromptSet;
  logger: Logger;
  defaultUserLevel: number;
  /** Shadow mode: answers are recorded, nothing approved is executed. */
  shadowMode: boolean;
  /** Names people address the bot by (persona names, platform display names): dropped before classifying. */
  botNames: () => readonly string[];
  /** The organisation directory (cached per organisation at the composition root); read when absent. */
  directory?: (orgId: string) => Promise<Directory>;
}

/** What the confirmation layer decided for this message. */
export type ConfirmationStep =
  | { kind: 'decided'; decision: TurnDecision }
  /**
   * Not an answer: continue the normal turn (with a note to prepend, or extra context for a change; `proposed`: the
   * changed call itself, written by the person in a form, which the turn checks and asks about instead of thinking).
   */
  | { kind: 'continue'; prefix?: string; modifying?: PendingActionView; proposed?: FormProposal };

/** A pending call as the person changed it in a form (Discord's 「変更する」). */
export interface FormProposal {
  toolName: string;
  parameters: Record<string, unknown>;
}

/** One message that may answer a pending confirmation, with the turn it runs in. */
export interface AnswerInput {
  msg: InboundMessage;
  session: SessionView;
  ctx: TurnContext;
  /** The work item of this turn: its reply asks the next question; its claim guards execution. */
  item: ClaimedItem;
  /** The sender as this turn's first statement read them from the database (permissions as they are now). */
  actor?: Actor;
}

/** The facts of a confirmed action's execution that every decision about it records. */
type Executed = Pick<TurnDecision, 'guardian' | 'auth' | 'proposals'>;

/**
 * Confirmations (R-S1–R-S4, seed 001 HITL). {@link open} stores the pending action of a question that was
 * composed; {@link answer} reads a message that may answer one: approval executes at most once (atomic
 * pending → approved → executed), after the AuthorizationGate checks again; denial cancels; a late answer
 * gets a note; a change request is re-proposed and confirmed again; an urgent new request cancels;
 * anything else gets a reminder and the pending action stays. An approval counts only for the round
 * whose question it answers: a double click or a second quick 「はい」 sent before the second question
 * was shown is asked again, never counted twice.
 */
export class ConfirmationFlow {
  constructor(private readonly d: ConfirmationFlowDeps) {}

  /**
   * After reply composition: stores the pending action of a confirmation question and adds its buttons.
   * A question the reply check blocked, or one in shadow mode, can never be approved: nothing is stored.
   */
  async open(composed: TurnDecision, lang: Language): Promise<TurnDecision> {
    if (composed.kind === 'confirm' && 'pendingActionId' in composed.ask) return composed;
    const ask = composed.kind === 'confirm' && 'by' in composed.ask ? composed.ask : null;
    if (!ask?.pending) return { ...composed, execution: { status: 'not_executed', reason: 'confirmation required' } };
    const { key, ...input } = ask.pending;
    const pending = await this.d.pending.open(key, { ...input, question: composed.reply.text });
    return {
      ...composed,
      reply: { ...composed.reply, options: confirmationOptions(this.d.prompts, lang, pending.id) },
      execution: { status: 'pending_confirmation', pendingActionId: pending.id },
    };
  }

  async answer(input: AnswerInput): Promise<ConfirmationStep> {
    const { msg, session, ctx } = input;
    const lang = ctx.language;
    // Only the deterministic classification reads the message without its addressee ("[To:9999]Hishoさん\n").
    const answer = classifyAnswer(stripLeadingName(msg.answerText ?? msg.text, this.d.botNames()));
    const key: SessionKey = { platform: msg.platform, roomId: msg.roomId, accountId: msg.senderAccountId };
    const pending = session.pending;
    const stale = msg.answerTo !== undefined && (!pending || pending.id !== msg.answerTo);

    if (stale) return this.lateClick(ctx, msg.answerTo!, msg.answerRound);
    if (!pending && (answer === 'approve' || answer === 'deny')) {
      // The session's action decided in the last two minutes: approved → run it (exactly once); else say how it ended.
      const recent = await this.d.pending.recentlyDecided(key);
      if (recent) {
        // A 「はい」 again (a duplicate, or this turn retried after a crash): report instead of asking the model.
        if (recent.status === 'approved' && answer === 'approve') return this.execute(input, recent);
        if (recent.status !== 'approved') return this.alreadyDecided(ctx, recent);
      }
    }
    if (!pending) {
      if (session.expiredPending && (answer === 'approve' || answer === 'deny')) {
        return this.decided('expired', 'S_PENDING_EXPIRED', 'SYSTEM', this.say('confirm.expired', lang));
      }
      return { kind: 'continue' };
    }
    if (answer === 'approve') {
      const round = { round: msg.answerRound, sentAt: new Date(msg.sentAt) };
      if (!(await this.d.pending.answersRound(pending, round))) return this.askAgain(ctx, pending);
      return this.approve(input, key, pending);
    }
    if (answer === 'deny') {
      const r = await this.d.pending.deny({ pendingId: pending.id, key });
      if (r.outcome === 'denied')
        return this.decided('cancelled', 'S_USER_DENIED', 'USER', this.say('confirm.cancelled', lang));
      if (r.outcome === 'already_decided' && r.action) return this.alreadyDecided(ctx, r.action);
      return this.noDecision(lang, r.outcome);
    }
    if (msg.edit) {
      // A form's values (Discord's 「変更する」): a change request like a typed one, with the changed call given.
      await this.d.pending.cancel(key, 'modified by the asker (form)');
      const proposed = { toolName: pending.proposal.toolName, parameters: msg.edit.parameters };
      return { kind: 'continue', modifying: pending, proposed };
    }
    if (answer === 'modify') {
      await this.d.pending.cancel(key, 'modified by the asker');
      return { kind: 'continue', modifying: pending };
    }
    if (isUrgent(msg.text)) {
      await this.d.pending.cancel(key, 'urgent interruption');
      const summary = pendingEffect(pending, lang).summary;
      return {
        kind: 'continue',
        prefix: personaMessage(this.d.prompts, 'confirm.urgent_cancelled', lang, { summary }),
      };
    }
    return this.remind(ctx, pending, 'S_PENDING_REMINDER');
  }

  /** The pending question again, with the round's buttons: 「さっきの確認がまだ…」. */
  private remind(ctx: TurnContext, pending: PendingActionView, reasonCode: ReasonCode): ConfirmationStep {
    const options = confirmationOptions(this.d.prompts, ctx.language, pending.id, pending.confirmationsGiven);
    return this.decided('reminder', reasonCode, 'SYSTEM', reminderText(this.d.prompts, pending, ctx.language), options);
  }

  /** An approval sent before this round's question was shown: that question again, nothing counted. */
  private askAgain(ctx: TurnContext, pending: PendingActionView): ConfirmationStep {
    if (pending.confirmationsGiven === 0) return this.remind(ctx, pending, 'S_ANSWER_BEFORE_QUESTION');
    return this.secondQuestion(ctx, pending, 'S_ANSWER_BEFORE_QUESTION');
  }

  /** 「念のため、もう一度確認するウル」 with the effect restated and the second round's buttons. */
  private secondQuestion(ctx: TurnContext, pending: PendingActionView, reasonCode: ReasonCode): ConfirmationStep {
    const lang = ctx.language;
    const decision: TurnDecision = {
      kind: 'confirm',
      reasonCode,
      decider: 'SYSTEM',
      calls: [],
      // Only the Guardian asks twice: its verdict when the call was proposed.
      guardian: guardianVerdictOf(pending),
      reply: {
        text: secondQuestionText(this.d.prompts, pending, lang),
        options: confirmationOptions(this.d.prompts, lang, pending.id, 1),
      },
      ask: { pendingActionId: pending.id, round: 1 },
    };
    return { kind: 'decided', decision };
  }

  private async approve(input: AnswerInput, key: SessionKey, pending: PendingActionView): Promise<ConfirmationStep> {
    // This turn's reply asks the second question (if one is needed): answers count only once it was delivered.
    const r = await this.d.pending.approve({
      pendingId: pending.id,
      key,
      expectedConfirmations: pending.confirmationsGiven,
      confirmationType: pending.confirmationType,
      questionKey: replyKeyOf(input.item),
    });
    if (r.outcome === 'needs_second')
      return this.secondQuestion(input.ctx, r.action ?? pending, 'S_SECOND_CONFIRMATION');
    if (r.outcome === 'already_decided' && r.action) return this.alreadyDecided(input.ctx, r.action);
    if (r.outcome !== 'approved') return this.noDecision(input.ctx.language, r.outcome);
    return this.execute(input, pending);
  }

  /**
   * A button's answer whose confirmation was decided before its turn (by a text answer queued ahead of it, or
   * anything else): the room already has that outcome, so nothing is posted (a contradicting second message is
   * worse than none); the truth is recorded with the turn and the question shows it (QuestionCloser). An
   * expired one gets the expiry note as before.
   */
  private async lateClick(ctx: TurnContext, pendingId: string, round?: number): Promise<ConfirmationStep> {
    const action = await this.d.pending.find(pendingId);
    const state = action ? answerState(action, new Date(), round) : 'expired';
    if (!action || state === 'expired' || state === 'open') {
      return this.decided('expired', 'S_PENDING_EXPIRED', 'SYSTEM', this.say('confirm.expired', ctx.language));
    }
    const text = decidedAnswerText(this.d.prompts, action, state, ctx.language, ctx.org.timezone);
    const decision = this.decision('ignored', 'S_ALREADY_DECIDED', 'SYSTEM', text);
    return { kind: 'decided', decision: { ...decision, silent: true } };
  }

  /** 「もう実行済みです: …」, 「取り消し済みです」…: an answer to a confirmation that is already decided. */
  private alreadyDecided(ctx: TurnContext, action: PendingActionView): ConfirmationStep {
    const state = answerState(action, new Date());
    if (state === 'open')
      return this.decided('ignored', 'S_ALREADY_DECIDED', 'SYSTEM', this.say('confirm.already', ctx.language));
    const text = decidedAnswerText(this.d.prompts, action, state, ctx.language, ctx.org.timezone);
    return this.decided(
      state === 'expired' ? 'expired' : 'ignored',
      state === 'expired' ? 'S_PENDING_EXPIRED' : 'S_ALREADY_DECIDED',
      'SYSTEM',
      text,
    );
  }

  /** Runs an approved action: the gate decides again, the handler runs once, the brain reports. */
  private async execute(input: AnswerInput, pending: PendingActionView): Promise<ConfirmationStep> {
    const { ctx, item } = input;
    const lang = ctx.language;
    if (this.d.shadowMode) {
      await this.d.pending.markFailed(pending.id, 'shadow mode: not executed');
      return this.decided('cancelled', 'S_SHADOW_NOT_EXECUTED', 'SYSTEM', this.say('confirm.cancelled', lang));
    }
    const summary = pendingEffect(pending, lang).summary;
    const proposal = pending.proposal;
    const auth = await this.authorizeAgain(input, pending);
    const { actor } = auth;
    const facts: Executed = {
      guardian: guardianVerdictOf(pending),
      auth: { result: auth.result, reasonCode: auth.reasonCode },
      proposals: [{ tool: proposal.toolName, parameters: proposal.parameters, pendingActionId: pending.id }],
    };
    if (auth.result === 'DENIED' || !actor) {
      await this.d.pending.markFailed(pending.id, `denied at execution: ${auth.reasonCode}`);
      const decision = this.decision('denied', auth.reasonCode, 'SYSTEM', this.say('confirm.denied_now', lang));
      return { kind: 'decided', decision: { ...decision, ...facts } as TurnDecision };
    }
    if (item.claimLost) throw new ClaimLostError();
    // Keyed by the pending action: a retried turn, or another worker that took the item over, does it once.
    const toolCtx = this.d.contexts.forCall(ctx, actor, `pending:${pending.id}`, item);
    const attributes = {
      [GEN_AI.operationName]: GEN_AI_OPERATION.executeTool,
      [GEN_AI.toolName]: proposal.toolName,
      [GEN_AI.toolType]: 'function',
      [HISHO.guardianVerdict]: facts.guardian?.action,
      [HISHO.guardianReasonCode]: facts.guardian?.reasonCode,
      [HISHO.gateDecision]: auth.result,
      [HISHO.gateReasonCode]: auth.reasonCode,
      [HISHO.pendingActionId]: pending.id,
      ...(captureContent() ? { [GEN_AI.toolArguments]: valueAttribute(proposal.parameters) } : {}),
    };
    // With tracing on, the confirmed call's `execute_tool` span; just the call otherwise.
    const exec = await inSpan(spanName.executeTool(proposal.toolName), { attributes }, async (span) => {
      const e = await this.d.executor.run(proposal.toolName, proposal.parameters, toolCtx);
      span.set({ [HISHO.toolStatus]: e.status });
      return e;
    });
    if (exec.status === 'ok') await this.d.pending.markExecuted(pending.id, exec.output);
    else await this.d.pending.markFailed(pending.id, exec.status === 'error' ? exec.code : exec.status);
    const execution = {
      status: exec.status,
      ms: exec.ms,
      ...(exec.status === 'internal_error' ? { errorId: exec.errorId } : {}),
    };
    if (exec.status === 'clarify') {
      const question = lang === 'en' && exec.questionEn ? exec.questionEn : exec.question;
      const decision = this.decision('clarify', 'T_CLARIFICATION', 'USER', question, numberedOptions(exec.options));
      return { kind: 'decided', decision: { ...decision, ...facts, execution } as TurnDecision };
    }
    const ok = exec.status === 'ok';
    const decided = {
      ...facts,
      execution,
      kind: ok ? ('executed' as const) : ('error' as const),
      reasonCode: ok ? ('S_USER_APPROVED' as const) : ('T_TOOL_FAILED' as const),
      decider: 'USER' as const,
    };
    // The brain writes the report from the sanitised result (R-C4); a template if it cannot.
    const continuation = confirmedActionContinuation({
      proposal,
      reasoning: pending.reasoning,
      confidence: pending.confidence,
      summary,
      result: toolResult(proposal, exec),
      note: 'The person confirmed this action; it has now run. Report the result with the reply tool.',
    });
    try {
      const report = await this.d.brain.decide({ ctx, tools: [], continuation, purpose: 'report_confirmed' });
      if (report.output.type !== 'tool_call') {
        const facts = { calls: report.calls, brain: { model: report.model } };
        return { kind: 'decided', decision: this.d.stage.answer(ctx, report.output, facts, decided) };
      }
    } catch (err) {
      this.d.logger.warn({ err: (err as Error).name }, 'report of a confirmed action fell back to the template');
    }
    const errorId = exec.status === 'internal_error' ? exec.errorId : '-';
    const text = ok
      ? personaMessage(this.d.prompts, 'confirm.executed', lang, {
          summary: doneSummary(pendingEffect(pending, lang), lang),
        })
      : personaMessage(this.d.prompts, 'confirm.failed', lang, { errorId });
    return { kind: 'decided', decision: { ...decided, calls: [], reply: { text } } as TurnDecision };
  }

  /**
   * Permissions may have changed since the question was asked: the gate decides again, with the sender as this
   * turn read them from the database (or loaded here) and the directory as it is now.
   */
  private authorizeAgain(
    input: AnswerInput,
    pending: PendingActionView,
  ): Promise<AuthDecision & { actor: Actor | null }> {
    const { ctx, msg } = input;
    return authorizeWithLookup(this.d.db, {
      actor: input.actor,
      orgId: ctx.org.id,
      platform: msg.platform,
      roomId: msg.roomId,
      accountId: msg.senderAccountId,
      defaultLevel: this.d.defaultUserLevel,
      fallbackAuthority: msg.roomAuthority,
      tool: this.d.registry.meta(pending.proposal.toolName),
      proposal: pending.proposal,
      directory: this.d.directory,
      onError: (err) => this.d.logger.warn({ err: (err as Error).name }, 'authorization lookup failed; denied'),
    });
  }

  private noDecision(lang: Language, outcome: NoDecision): ConfirmationStep {
    if (outcome === 'expired')
      return this.decided('expired', 'S_PENDING_EXPIRED', 'SYSTEM', this.say('confirm.expired', lang));
    if (outcome === 'not_yours')
      return this.decided('ignored', 'S_NOT_YOURS', 'SYSTEM', this.say('confirm.not_yours', lang));
    return this.decided('ignored', 'S_ALREADY_DECIDED', 'SYSTEM', this.say('confirm.already', lang));
  }

  private say(
    key: 'confirm.already' | 'confirm.expired' | 'confirm.cancelled' | 'confirm.not_yours' | 'confirm.denied_now',
    lang: Language,
  ): string {
    return personaMessage(this.d.prompts, key, lang);
  }

  private decided(
    kind: Exclude<DecisionKind, 'confirm'>,
    reasonCode: ReasonCode,
    decider: 'SYSTEM' | 'USER',
    text: string,
    options?: ReplyOption[],
  ): ConfirmationStep {
    return { kind: 'decided', decision: this.decision(kind, reasonCode, decider, text, options) };
  }

  /** A decision this layer makes without the brain (no LLM calls). */
  private decision(
    kind: Exclude<DecisionKind, 'confirm'>,
    reasonCode: ReasonCode,
    decider: 'SYSTEM' | 'USER',
    text: string,
    options?: ReplyOption[],
  ): TurnDecision {
    const reply = { text, ...(options ? { options } : {}) };
    return { kind, reasonCode, decider, reply, calls: [] } as TurnDecision;
  }
}

/**
 * The Guardian's verdict when a pending action was proposed (stored with it); for rows from before it was
 * stored, the CONFIRM the question was asked with.
 */
function guardianVerdictOf(pending: PendingActionView): GuardianOutcome {
  const stored = pending.proposal.guardian as Partial<GuardianOutcome> | undefined;
  if (stored && typeof stored.action === 'string' && typeof stored.reasonCode === 'string') {
    return { action: stored.action, reasonCode: stored.reasonCode };
  }
  return { action: 'CONFIRM', reasonCode: pending.reasonCode as GuardianOutcome['reasonCode'] };
}
