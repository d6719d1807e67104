import type Anthropic from '@anthropic-ai/sdk';
import type { ReplyOption } from '../adapters/types';
import {
  authorize, directoryFor, filterToolsForActor, loadDirectory, type Actor, type AuthDecision, type Directory,
} from '../authorization';
import { BrainFailure, type Brain, type BrainDecision, type LlmCallRecord } from '../brain/brain';
import { personaMessage, type PromptSet } from '../brain/prompts';
import { reasoningText, type BrainOutput, type ToolProposal } from '../brain/types';
import { neutraliseValue } from '../context/quote';
import type { TurnContext } from '../context/types';
import type { Db } from '../db/prisma';
import { asAppError } from '../errors/app-error';
import { checkReplyText, evaluateProposal, type GuardianConfig, type GuardianPolicy, type GuardianVerdict } from '../guardian';
import type { ClaimedItem } from '../intake/work-queue';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { SessionKey } from '../state/session-key';
import { proposalKey, type ExecutionResult, type ToolExecutor } from '../tools/executor';
import type { ToolRegistry } from '../tools/registry';
import type { ToolContext, ToolMeta, ToolServices } from '../tools/types';
import type { ToolStage } from './tool-stage';
import type { TurnOutcome, TurnRunner } from './turn-runner';

/** The part of the BrainStateManager the proposal stage needs. */
export interface PendingStore {
  createPending(key: SessionKey, input: {
    orgId: string; memberId: string | null; turnId?: string; proposal: ToolProposal & Record<string, unknown>; question: string;
    confirmationType: 'single' | 'double'; originalMessage: string; reasoning: string; confidence: number; reasonCode: string;
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
  /** Builds the platform services for a turn (ChatWork tasks, posting to the room). */
  services: (ctx: TurnContext, idempotencyKey: string) => ToolServices;
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

/** Button keys for a pending action (Discord/console); text answers "1"/"2" work everywhere. */
export function confirmationOptions(p: PromptSet, lang: 'ja' | 'en', pendingId: string): ReplyOption[] {
  const compact = pendingId.replace(/-/g, '');
  return [
    { answer: '1', label: personaMessage(p, 'confirm.yes', lang), key: `h1:${compact}_a`, style: 'primary' },
    { answer: '2', label: personaMessage(p, 'confirm.no', lang), key: `h1:${compact}_d`, style: 'secondary' },
  ];
}

/**
 * Proposals → Guardian → AuthorizationGate → executor, looping results back to the brain within a step
 * budget (R-B3). CONFIRM stops and asks; BLOCK and DENIED go back to the model as errors it must not
 * retry blindly; nothing runs that both layers did not allow.
 */
export class ProposalStage implements ToolStage {
  constructor(private readonly d: ProposalStageDeps) {}

  toolsFor(actor: Actor): Anthropic.Messages.Tool[] {
    return filterToolsForActor(actor, this.d.registry.all()).map((t) => this.d.registry.toAnthropic(this.d.registry.get(t.name)!));
  }

  async run(input: { ctx: TurnContext; actor: Actor; decision: BrainDecision; item: ClaimedItem; turnRunner: TurnRunner }): Promise<TurnOutcome> {
    const { ctx, actor, item, turnRunner } = input;
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
    let continuation: Anthropic.Messages.MessageParam[] = [];
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
      const results: Anthropic.Messages.ToolResultBlockParam[] = [];
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
        if (verdict.action === 'CONFIRM' || auth.result === 'CONFIRM') {
          const dropped = out.proposals.length - index - 1;
          const asked = { ...proposal, parameters: params };
          return this.askConfirmation(ctx, actor, out, asked, { verdict, auth }, calls, base(), dropped);
        }
        if (this.d.shadowMode) {
          t.execution = { status: 'shadow', ms: 0 };
          results.push(this.errorResult(proposal, 'SHADOW MODE: not executed. Tell the person this is a trial run.'));
          continue;
        }
        const exec = await this.d.executor.run(proposal.toolName, params, this.toolContext(ctx, actor, proposalKey(item.dedupeKey, proposal.toolName, params)));
        t.execution = this.execTrail(exec);
        if (exec.status === 'clarify') {
          const q = ctx.language === 'en' && exec.questionEn ? exec.questionEn : exec.question;
          return turnRunner.finalText(ctx, calls, { ...base(), decision: 'CLARIFY', reasonCode: 'T_CLARIFICATION', finalDecider: 'SYSTEM', guardianAction: verdict.action, guardianReason: verdict.reasonCode, authResult: auth.result, authReason: auth.reasonCode },
            q, exec.options.slice(0, 9).map((label, i) => ({ answer: String(i + 1), label })));
        }
        if (exec.status === 'internal_error') this.d.logger.error({ errorId: exec.errorId, tool: proposal.toolName, err: exec.internal }, 'tool failed');
        results.push(this.resultBlock(proposal, exec));
      }
      continuation = [...continuation, { role: 'assistant', content: current.assistantContent as Anthropic.Messages.ContentBlockParam[] }, { role: 'user', content: results }];
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

  /** Asks before running: the Guardian said CONFIRM, or the gate did (a person or organisation-wide rule). */
  private async askConfirmation(ctx: TurnContext, actor: Actor, out: Extract<BrainOutput, { type: 'tool_call' }>,
    proposal: ToolProposal, why: { verdict: GuardianVerdict; auth: AuthDecision }, calls: LlmCallRecord[],
    base: ReturnType<TurnRunner['baseRecord']>, dropped: number): Promise<TurnOutcome> {
    const { verdict, auth } = why;
    const reasonCode = verdict.action === 'CONFIRM' ? verdict.reasonCode : auth.reasonCode;
    const p = this.d.prompts;
    const lang = ctx.language;
    const summary = this.describe(proposal, lang);
    // The effect in numbers (recipients, deletions), restated again in the second confirmation.
    const tool = this.d.registry.meta(proposal.toolName);
    const noteJa = [verdict.userNoteJa, auth.noteJa, effectNote(proposal, tool, 'ja')].filter(Boolean).join('／');
    const noteEn = [auth.noteEn, effectNote(proposal, tool, 'en')].filter(Boolean).join('; ');
    const note = lang === 'ja' ? (noteJa ? `（${noteJa}）\n` : '') : (noteEn ? `(Note: ${noteEn}.)\n` : '');
    const question = personaMessage(p, 'confirm.question', lang, { summary, note });
    const record = {
      ...base, decision: 'CONFIRM', reasonCode, finalDecider: 'SYSTEM' as const,
      guardianAction: verdict.action, guardianReason: verdict.reasonCode,
      authResult: auth.result, authReason: auth.reasonCode,
      notes: { dropped, confirmationType: verdict.confirmationType ?? 'single' },
    };
    if (!this.d.pending || this.d.shadowMode) {
      // Without a state manager (or in shadow mode) nothing can be approved later: ask, record, execute nothing.
      return { text: question, title: personaMessage(p, 'confirm.title', lang), calls, record: { ...record, execution: { status: 'not_executed', reason: 'confirmation required' } } };
    }
    const key: SessionKey = { platform: ctx.message.platform, roomId: ctx.message.roomId, accountId: ctx.message.senderAccountId };
    const pending = await this.d.pending.createPending(key, {
      orgId: ctx.org.id, memberId: actor.memberId, proposal: { ...proposal, summary, guardianNote: noteJa || null, guardianNoteEn: noteEn || null } as ToolProposal & Record<string, unknown>,
      question, confirmationType: verdict.confirmationType ?? 'single', originalMessage: ctx.message.text,
      reasoning: reasoningText(out.reasoning), confidence: out.confidence.overall, reasonCode,
    });
    return { text: question, title: personaMessage(p, 'confirm.title', lang), options: confirmationOptions(p, lang, pending.id), calls, record: { ...record, execution: { status: 'pending_confirmation', pendingActionId: pending.id } } };
  }

  /** What will happen, in the person's words if the model gave a safe summary, else from the call. */
  describe(proposal: ToolProposal, lang: 'ja' | 'en'): string {
    const s = proposal.summary?.trim();
    if (s && checkReplyText(s, this.d.guardianConfig).action === 'ALLOW') return s;
    const params = Object.entries(proposal.parameters).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : typeof v === 'object' ? JSON.stringify(v) : String(v)}`).join(' / ');
    const safe = checkReplyText(params, this.d.guardianConfig);
    const shown = safe.action === 'BLOCK' ? '' : ` (${safe.text})`;
    return lang === 'en' ? `Run "${proposal.toolName}"${shown}.` : `「${proposal.toolName}」を実行します${shown}。`;
  }

  toolContext(ctx: TurnContext, actor: Actor, idempotencyKey: string): ToolContext {
    return {
      orgId: ctx.org.id, platform: ctx.message.platform, roomId: ctx.message.roomId,
      member: actor.memberId ? { id: actor.memberId, name: actor.name ?? '', level: actor.level, departmentId: actor.departmentId } : null,
      idempotencyKey, now: () => this.d.now?.() ?? new Date(), timezone: ctx.org.timezone, services: this.d.services(ctx, idempotencyKey),
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
  resultBlock(proposal: ToolProposal, exec: ExecutionResult): Anthropic.Messages.ToolResultBlockParam {
    if (exec.status === 'ok') {
      return { type: 'tool_result', tool_use_id: proposal.id, content: JSON.stringify(neutraliseValue(exec.output)) };
    }
    if (exec.status === 'error') return this.errorResult(proposal, `${exec.code}: ${exec.modelMessage}`);
    if (exec.status === 'internal_error') return this.errorResult(proposal, `The tool failed (error id ${exec.errorId}). Apologise and suggest trying again later.`);
    return this.errorResult(proposal, 'Needs clarification.');
  }

  private errorResult(proposal: ToolProposal, text: string): Anthropic.Messages.ToolResultBlockParam {
    return { type: 'tool_result', tool_use_id: proposal.id, is_error: true, content: text };
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
