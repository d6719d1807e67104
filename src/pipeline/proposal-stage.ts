import type { ReplyOption } from '../adapters/types';
import {
  authorize, directoryFor, filterToolsForActor, loadDirectory, type Actor, type AuthDecision, type Directory,
} from '../authorization';
import { BrainFailure, type Brain, type BrainDecision } from '../brain/brain';
import { nextStep, type Continuation, type ToolResult } from '../brain/continuation';
import type { ToolSpec } from '../brain/tool-definitions';
import { type LlmCallRecord } from '../core/llm-usage';
import { type PromptSet } from '../brain/prompts';
import { personaMessage } from '../core/messages';
import { reasoningText, type BrainOutput, type ToolProposal } from '../core/proposal';
import { neutraliseValue } from '../context/quote';
import type { TurnContext } from '../context/types';
import type { Db } from '../db/prisma';
import { asAppError } from '../errors/app-error';
import { checkReplyText, evaluateProposal, type GuardianConfig, type GuardianPolicy, type GuardianVerdict } from '../guardian';
import { claimLostError, replyKeyOf, type ClaimedItem } from '../intake/work-queue';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { SessionKey } from '../state/session-key';
import { buttonKey } from '../state/button-key';
import type { PendingActionView } from '../state/types';
import { diffEffects, genericEffect, isEffectDescription, renderEffect } from '../tools/describe';
import { originKey, type CallFailure, type ExecutionResult, type ToolExecutor } from '../tools/executor';
import type { ToolRegistry } from '../tools/registry';
import { type DescribeContext, type EffectDescription, type ToolContext, type ToolServices } from '../tools/types';
import { hasEffects, type ToolMeta } from '../core/tool-meta';
import type { ToolStage } from './tool-stage';
import type { TurnOutcome, TurnRunner } from './turn-runner';

/** The part of the BrainStateManager the proposal stage needs. */
export interface PendingStore {
  createPending(key: SessionKey, input: {
    orgId: string; memberId: string | null; turnId?: string; proposal: ToolProposal & Record<string, unknown>; question: string;
    confirmationType: 'single' | 'double'; originalMessage: string; reasoning: string; confidence: number; reasonCode: string;
    questionKey?: string;
  }): Promise<{ id: string }>;
}

/** One proposal's path through the deciding layers, for the turn record. */
export interface ProposalTrail {
  step: number;
  tool: string;
  parameters: unknown;
  guardian: { action: string; reasonCode: string; trace?: unknown };
  auth?: { result: string; reasonCode: string };
  execution?: { status: string; ms: number; code?: string; errorId?: string; output?: unknown };
}

export interface ProposalStageDeps {
  db: Db;
  brain: Brain;
  registry: ToolRegistry;
  executor: ToolExecutor;
  prompts: PromptSet;
  guardianConfig: GuardianConfig;
  stepBudget: number;
  shadowMode: boolean;
  logger: Logger;
  pending?: PendingStore;
  metrics?: Metrics;
  /** Builds the platform services for a turn (ChatWork tasks, posting to the room under the work item's claim). */
  services: (ctx: TurnContext, idempotencyKey: string, item?: ClaimedItem) => ToolServices;
  now?: () => Date;
}

/** 「3人に送ります」「全員に送ります」「5件を削除します」 from the tool's declared parameter roles. */
export function effectNote(proposal: ToolProposal, tool: ToolMeta | undefined, lang: 'ja' | 'en' = 'ja'): string {
  const notes: string[] = [];
  for (const [name, role] of Object.entries(tool?.paramRoles ?? {})) {
    const v = proposal.parameters[name];
    if (role === 'recipients') {
      const all = (x: unknown) => typeof x === 'string' && /^(all|全員|みんな|everyone)$/i.test(x.trim());
      const n = Array.isArray(v) ? new Set(v.map(String)).size : 0;
      if (all(v) || (Array.isArray(v) && v.some(all))) notes.push(lang === 'en' ? 'it goes to everyone in the room' : 'ルームの全員に送ります');
      else if (Array.isArray(v)) notes.push(lang === 'en' ? `it goes to ${n} people` : `${n}人に送ります`);
    }
    if (role === 'deletion' && Array.isArray(v)) notes.push(lang === 'en' ? `${v.length} item(s) will be deleted` : `${v.length}件を削除します`);
  }
  return notes.join(lang === 'en' ? '; ' : '／');
}

/**
 * Button keys for a pending action (Discord/console), bound to the confirmation round whose question
 * shows them; text answers "1"/"2" work everywhere.
 */
export function confirmationOptions(p: PromptSet, lang: 'ja' | 'en', pendingId: string, round = 0): ReplyOption[] {
  return [
    { answer: '1', label: personaMessage(p, 'confirm.yes', lang), key: buttonKey(pendingId, 'approve', round),
      style: 'primary' },
    { answer: '2', label: personaMessage(p, 'confirm.no', lang), key: buttonKey(pendingId, 'deny', round),
      style: 'secondary' },
  ];
}

/** What a stored pending action will do: the effect it was confirmed with, or (older rows) its summary. */
export function pendingEffect(pending: Pick<PendingActionView, 'proposal'>, lang: 'ja' | 'en'): EffectDescription {
  const { effect, summary, toolName, parameters } = pending.proposal;
  if (isEffectDescription(effect)) return effect;
  return typeof summary === 'string' ? { summary, facts: [] } : genericEffect(toolName, parameters, lang);
}

/** One proposal the Guardian let through, on its way to a confirmation question. */
interface ConfirmInput {
  ctx: TurnContext;
  actor: Actor;
  out: Extract<BrainOutput, { type: 'tool_call' }>;
  proposal: ToolProposal;
  verdict: GuardianVerdict;
  /** The gate's decision (ALLOWED, or CONFIRM from the person-scope table). */
  auth: AuthDecision;
  effect: EffectDescription;
  calls: LlmCallRecord[];
  base: ReturnType<TurnRunner['baseRecord']>;
  dropped: number;
  item: ClaimedItem;
  /** The pending action this proposal changes ("はい、でも期限は金曜にして"): shown as a diff. */
  modifying?: PendingActionView;
}

/**
 * Proposals → Guardian → AuthorizationGate → executor, looping results back to the brain within a step
 * budget (R-B3). CONFIRM stops and asks; BLOCK and DENIED go back to the model as errors it must not
 * retry blindly; nothing runs that both layers did not allow.
 */
export class ProposalStage implements ToolStage {
  constructor(private readonly d: ProposalStageDeps) {}

  toolsFor(actor: Actor): ToolSpec[] {
    return filterToolsForActor(actor, this.d.registry.all());
  }

  async run(input: {
    ctx: TurnContext; actor: Actor; decision: BrainDecision; item: ClaimedItem; turnRunner: TurnRunner;
    modifying?: PendingActionView;
  }): Promise<TurnOutcome> {
    const { ctx, actor, item, turnRunner, modifying } = input;
    const calledBefore = new Map<string, number>();
    const trail: ProposalTrail[] = [];
    const calls: LlmCallRecord[] = [...input.decision.calls];
    const tools = this.toolsFor(actor);
    const base = () => ({ ...turnRunner.baseRecord(ctx, actor, input.decision), proposals: trail, toolsMs: trail.reduce((a, t) => a + (t.execution?.ms ?? 0), 0) });
    if (ctx.degraded.includes('organisation')) {
      // Without the organisation's policies the Guardian cannot decide: execute nothing (fail-closed).
      return turnRunner.finalText(ctx, calls, { ...base(), decision: 'BLOCK', reasonCode: 'G_POLICIES_UNAVAILABLE', finalDecider: 'SYSTEM', guardianAction: 'BLOCK', guardianReason: 'G_POLICIES_UNAVAILABLE' },
        personaMessage(this.d.prompts, 'reply.degraded_db', ctx.language));
    }
    const policies = this.policies(ctx);
    const directory = await loadDirectory(this.d.db, ctx.org.id);
    let continuation: Continuation = [];
    let current: BrainDecision = input.decision;

    for (let step = 1; ; step++) {
      const out = current.output;
      if (out.type !== 'tool_call') {
        return turnRunner.answerOutput(ctx, out, calls, { ...base(), ...this.summaryRecord(trail) });
      }
      if (step > this.d.stepBudget) {
        return turnRunner.finalText(ctx, calls, { ...base(), decision: 'ERROR', reasonCode: 'BUDGET_EXCEEDED', finalDecider: 'SYSTEM', errorCategory: 'SYSTEM' },
          personaMessage(this.d.prompts, 'error.BUDGET_EXCEEDED', ctx.language));
      }
      const results: ToolResult[] = [];
      for (const [index, proposal] of out.proposals.entries()) {
        const verdict = this.guard(ctx, actor, out, proposal, policies);
        const t: ProposalTrail = { step, tool: proposal.toolName, parameters: proposal.parameters, guardian: { action: verdict.action, reasonCode: verdict.reasonCode, trace: verdict.trace } };
        trail.push(t);
        if (verdict.reasonCode.startsWith('G_CONSTITUTION')) {
          this.d.metrics?.constitutionViolations.inc({ reason_code: verdict.reasonCode });
          this.d.logger.error({ alert: 'constitution_violation', reasonCode: verdict.reasonCode, tool: proposal.toolName, roomId: ctx.room.roomId }, 'ADMIN ALERT: constitution violation by the LLM proposal');
        }
        if (verdict.action === 'BLOCK') {
          results.push(this.errorResult(proposal, `BLOCKED (${verdict.reasonCode}): ${verdict.reason}. Do not retry this call; explain to the person plainly.`));
          continue;
        }
        const params = verdict.modifiedParameters ?? proposal.parameters;
        const auth = await this.authorize(ctx, actor, { ...proposal, parameters: params }, directory);
        t.auth = { result: auth.result, reasonCode: auth.reasonCode };
        if (auth.result === 'DENIED') {
          results.push(this.errorResult(proposal, `DENIED (${auth.reasonCode}): the person is not permitted to do this. Do not retry; tell them politely without revealing any data.`));
          continue;
        }
        const clarify = (c: Extract<CallFailure, { status: 'clarify' }>) => turnRunner.finalText(ctx, calls, {
          ...base(), decision: 'CLARIFY', reasonCode: 'T_CLARIFICATION', finalDecider: 'SYSTEM',
          guardianAction: verdict.action, guardianReason: verdict.reasonCode,
          authResult: auth.result, authReason: auth.reasonCode,
        }, ctx.language === 'en' && c.questionEn ? c.questionEn : c.question,
        c.options.slice(0, 9).map((label, i) => ({ answer: String(i + 1), label })));
        // A changed proposal is always asked again, whatever the Guardian says: nothing runs on that turn.
        const tool = this.d.registry.meta(proposal.toolName);
        const reconfirm = modifying !== undefined && hasEffects(tool ?? { effects: [] });
        if (verdict.action === 'CONFIRM' || auth.result === 'CONFIRM' || reconfirm) {
          const described = await this.d.executor.describe(proposal.toolName, params, this.describeContext(ctx, actor));
          if (described.status === 'clarify') return clarify(described);
          if (described.status !== 'ok') {
            // The call could not run as proposed (bad input, unknown person): the model hears why, nothing is asked.
            t.execution = this.execTrail(described);
            results.push(this.resultBlock(proposal, described));
            continue;
          }
          // Asked because the Guardian said so, the gate did (a person or organisation-wide rule), or it is a change.
          const asked = verdict.action === 'CONFIRM' ? verdict
            : {
              ...verdict, action: 'CONFIRM' as const,
              reasonCode: auth.result === 'CONFIRM' ? auth.reasonCode : 'S_CHANGE_RECONFIRM',
              confirmationType: 'single' as const, userNoteJa: undefined,
            };
          return this.askConfirmation({
            ctx, actor, out, proposal: { ...proposal, parameters: params }, verdict: asked, auth, effect: described.effect,
            calls, base: base(),
            dropped: out.proposals.length - index - 1, item, modifying,
          }, turnRunner);
        }
        if (this.d.shadowMode) {
          t.execution = { status: 'shadow', ms: 0 };
          results.push(this.errorResult(proposal, 'SHADOW MODE: not executed. Tell the person this is a trial run.'));
          continue;
        }
        if (item.claimLost) throw claimLostError();
        // Keyed by origin (this work item, the n-th call of this tool), not by parameters: a retried turn whose model
        // rewords the title gets the same key, so the handler returns what the first attempt created.
        const nth = calledBefore.get(proposal.toolName) ?? 0;
        calledBefore.set(proposal.toolName, nth + 1);
        const toolCtx = this.toolContext(ctx, actor, originKey(item.dedupeKey, proposal.toolName, nth), item);
        const exec = await this.d.executor.run(proposal.toolName, params, toolCtx);
        t.execution = this.execTrail(exec);
        if (exec.status === 'clarify') return clarify(exec);
        if (exec.status === 'internal_error') this.d.logger.error({ errorId: exec.errorId, tool: proposal.toolName, err: exec.internal }, 'tool failed');
        results.push(this.resultBlock(proposal, exec));
      }
      continuation = nextStep(continuation, current, results);
      try {
        current = await this.d.brain.decide({ ctx, tools, continuation, purpose: `step_${step + 1}` });
        calls.push(...current.calls);
      } catch (err) {
        const app = asAppError(err, 'LLM_UNAVAILABLE');
        if (err instanceof BrainFailure) calls.push(...err.calls);
        const executed = trail.filter((x) => x.execution?.status === 'ok');
        const text = executed.length > 0
          ? personaMessage(this.d.prompts, 'confirm.executed', ctx.language, { summary: '' })
          : personaMessage(this.d.prompts, `error.${app.code}`, ctx.language, { errorId: app.errorId });
        return turnRunner.finalText(ctx, calls, { ...base(), ...this.summaryRecord(trail), decision: executed.length > 0 ? 'EXECUTED' : 'ERROR', reasonCode: app.code, finalDecider: 'SYSTEM', errorId: app.errorId, errorCategory: app.category }, text);
      }
    }
  }

  /** Guardian verdict for one proposal (pure; the turn's facts passed in). */
  private guard(ctx: TurnContext, actor: Actor, out: Extract<BrainOutput, { type: 'tool_call' }>, proposal: ToolProposal, policies: GuardianPolicy[]): GuardianVerdict {
    return evaluateProposal({
      proposal, tool: this.d.registry.meta(proposal.toolName), reasoning: out.reasoning, confidence: out.confidence, policies, config: this.d.guardianConfig,
      context: { senderMemberId: actor.memberId ?? undefined, senderName: actor.name ?? undefined, now: ctx.now, timezone: ctx.org.timezone },
    });
  }

  /** The gate's decision, with the owners of any task the proposal names (a failed lookup denies). */
  private async authorize(ctx: TurnContext, actor: Actor, proposal: ToolProposal, base: Directory,
  ): Promise<AuthDecision> {
    const tool = this.d.registry.meta(proposal.toolName);
    const full = await directoryFor(this.d.db, ctx.org.id, base, tool, proposal).catch(() => null);
    if (!full) return { result: 'DENIED', reasonCode: 'Z_LOOKUP_ERROR', reason: 'task owner lookup failed; denied fail-closed' };
    return authorize({ actor, tool, proposal, directory: full });
  }

  /** The organisation's policies that carry a machine rule (CEO teachings, Guardian priority 4), from the turn's context. */
  private policies(ctx: TurnContext): GuardianPolicy[] {
    return ctx.policies.filter((p) => p.rule !== undefined && p.rule !== null).map((p) => ({ id: p.id, title: p.title, rule: p.rule as GuardianPolicy['rule'] }));
  }

  /**
   * Asks before running: the question states the call's effect from its checked parameters (never only the
   * model's summary, which may follow), the diff against the action it changes, and the Guardian's and gate's notes.
   */
  private async askConfirmation(c: ConfirmInput, turnRunner: TurnRunner): Promise<TurnOutcome> {
    const { ctx, actor, out, proposal, verdict, auth, effect, calls, base } = c;
    const p = this.d.prompts;
    const lang = ctx.language;
    // The effect in numbers (recipients, deletions), restated again in the second confirmation.
    const tool = this.d.registry.meta(proposal.toolName);
    const noteJa = [verdict.userNoteJa, auth.noteJa, effectNote(proposal, tool, 'ja')].filter(Boolean).join('／');
    const noteEn = [auth.noteEn, effectNote(proposal, tool, 'en')].filter(Boolean).join('; ');
    const note = lang === 'ja' ? (noteJa ? `（${noteJa}）\n` : '') : (noteEn ? `(Note: ${noteEn}.)\n` : '');
    const parts = [renderEffect(effect)];
    if (c.modifying) {
      const before = pendingEffect(c.modifying, lang);
      const diff = c.modifying.proposal.toolName === proposal.toolName
        ? diffEffects(before, effect, lang) : [`${before.summary} → ${effect.summary}`];
      const key = diff.length > 0 ? 'confirm.changes' : 'confirm.no_changes';
      parts.push(personaMessage(p, key, lang, { lines: diff.join('\n') }));
    }
    const modelSummary = proposal.summary?.trim();
    if (modelSummary && modelSummary !== effect.summary) {
      parts.push(personaMessage(p, 'confirm.model_summary', lang, { text: modelSummary }));
    }
    const question = personaMessage(p, 'confirm.question', lang, { summary: parts.join('\n'), note });
    const record = {
      ...base, decision: 'CONFIRM', reasonCode: verdict.reasonCode, finalDecider: 'SYSTEM' as const,
      guardianAction: verdict.action, guardianReason: verdict.reasonCode, authResult: auth.result, authReason: auth.reasonCode,
      notes: {
        dropped: c.dropped, confirmationType: verdict.confirmationType ?? 'single',
        ...(c.modifying ? { modifies: c.modifying.id } : {}),
      },
    };
    const title = personaMessage(p, 'confirm.title', lang);
    const checked = turnRunner.finalText(ctx, calls, record, question, undefined, title);
    if (checked.record.decision === 'BLOCK' || !this.d.pending || this.d.shadowMode) {
      // A question the reply check blocks, no state manager, or shadow mode: nothing can be approved later.
      const execution = { status: 'not_executed', reason: 'confirmation required' };
      return { ...checked, record: { ...checked.record, execution } };
    }
    const key: SessionKey = { platform: ctx.message.platform, roomId: ctx.message.roomId, accountId: ctx.message.senderAccountId };
    const stored = {
      ...proposal, summary: effect.summary, effect, modelSummary: modelSummary ?? null,
      guardianNote: noteJa || null, guardianNoteEn: noteEn || null,
    };
    const pending = await this.d.pending.createPending(key, {
      orgId: ctx.org.id, memberId: actor.memberId, proposal: stored as ToolProposal & Record<string, unknown>,
      question: checked.text, confirmationType: verdict.confirmationType ?? 'single', originalMessage: ctx.message.text,
      reasoning: reasoningText(out.reasoning), confidence: out.confidence.overall, reasonCode: verdict.reasonCode,
      questionKey: replyKeyOf(c.item),
    });
    const execution = { status: 'pending_confirmation', pendingActionId: pending.id };
    return { ...checked, options: confirmationOptions(p, lang, pending.id), record: { ...checked.record, execution } };
  }

  /** What a tool's `describe` may use: the turn's facts and the database, nothing with effects. */
  private describeContext(ctx: TurnContext, actor: Actor): DescribeContext {
    return { ...this.turnFacts(ctx, actor), services: { db: this.d.db }, lang: ctx.language };
  }

  /**
   * A handler's context. `item` is the work item this runs for: its claim is checked again before anything
   * is posted (a worker that lost its claim posts nothing).
   */
  toolContext(ctx: TurnContext, actor: Actor, idempotencyKey: string, item?: ClaimedItem): ToolContext {
    return { ...this.turnFacts(ctx, actor), idempotencyKey, services: this.d.services(ctx, idempotencyKey, item) };
  }

  private turnFacts(ctx: TurnContext, actor: Actor): Omit<ToolContext, 'idempotencyKey' | 'services'> {
    return {
      orgId: ctx.org.id, platform: ctx.message.platform, roomId: ctx.message.roomId,
      member: actor.memberId ? { id: actor.memberId, name: actor.name ?? '', level: actor.level, departmentId: actor.departmentId } : null,
      now: () => this.d.now?.() ?? new Date(), timezone: ctx.org.timezone,
    };
  }

  private execTrail(exec: ExecutionResult): ProposalTrail['execution'] {
    switch (exec.status) {
      case 'ok': return { status: 'ok', ms: exec.ms, output: exec.output };
      case 'error': return { status: 'error', ms: exec.ms, code: exec.code };
      case 'clarify': return { status: 'clarify', ms: exec.ms };
      case 'internal_error': return { status: 'internal_error', ms: exec.ms, errorId: exec.errorId };
    }
  }

  /**
   * Sanitised result for the model: outputs (stored text in them neutralised: data, never instructions) and
   * model-safe errors; internal errors only as an id.
   */
  resultBlock(proposal: ToolProposal, exec: ExecutionResult): ToolResult {
    if (exec.status === 'ok') {
      return { proposalId: proposal.id, content: JSON.stringify(neutraliseValue(exec.output)), isError: false };
    }
    if (exec.status === 'error') return this.errorResult(proposal, `${exec.code}: ${exec.modelMessage}`);
    if (exec.status === 'internal_error') return this.errorResult(proposal, `The tool failed (error id ${exec.errorId}). Apologise and suggest trying again later.`);
    return this.errorResult(proposal, 'Needs clarification.');
  }

  private errorResult(proposal: ToolProposal, text: string): ToolResult {
    return { proposalId: proposal.id, content: text, isError: true };
  }

  /** Turn-level Guardian/Auth summary: the strictest outcome of the turn's proposals. */
  private summaryRecord(trail: ProposalTrail[]): Record<string, unknown> {
    if (trail.length === 0) return {};
    const order = ['BLOCK', 'CONFIRM', 'MODIFY', 'ALLOW'];
    const worst = [...trail].sort((a, b) => order.indexOf(a.guardian.action) - order.indexOf(b.guardian.action))[0]!;
    const denied = trail.find((t) => t.auth?.result === 'DENIED');
    const executed = trail.some((t) => t.execution?.status === 'ok');
    const auth = denied?.auth ?? trail.find((t) => t.auth)?.auth;
    const blocked = worst.guardian.action === 'BLOCK';
    return {
      guardianAction: worst.guardian.action, guardianReason: worst.guardian.reasonCode,
      authResult: auth?.result ?? null, authReason: auth?.reasonCode ?? null,
      execution: trail.map((t) => ({ tool: t.tool, ...t.execution })),
      decision: executed ? 'EXECUTED' : blocked ? 'BLOCK' : denied ? 'DENIED' : 'REPLY',
      reasonCode: executed ? 'T_EXECUTED' : blocked ? worst.guardian.reasonCode : denied ? denied.auth!.reasonCode : 'B_TEXT_RESPONSE',
      finalDecider: 'SYSTEM',
    };
  }
}
