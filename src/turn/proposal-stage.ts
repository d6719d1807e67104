import { randomUUID } from 'node:crypto';
import {
  authorize,
  directoryFor,
  handledTopics,
  loadDirectory,
  filterToolsForActor,
  resolveReferences,
  toolsAboveActor,
  type Actor,
  type AuthDecision,
  type Directory,
  type UnresolvedReference,
} from '../authorization';
import { BrainFailure, type Brain, type BrainDecision } from '../brain/brain';
import { nextStep, type Continuation, type ToolResult } from '../brain/continuation';
import type { PromptSet } from '../brain/prompts';
import type { ToolSpec } from '../brain/tool-definitions';
import type { LlmCallRecord } from '../core/llm-usage';
import { personaMessage } from '../core/messages';
import { reasoningText, type BrainOutput, type ToolProposal } from '../core/proposal';
import { hasEffects } from '../core/tool-meta';
import { neutraliseValue } from '../context/quote';
import type { TurnContext } from '../context/types';
import type { Db } from '../db/prisma';
import { asAppError } from '../core/app-error';
import {
  checkBrainOutputMeta,
  checkReplyClaims,
  evaluateProposal,
  type GuardianConfig,
  type GuardianPolicy,
  type GuardianVerdict,
} from '../guardian';
import { ClaimLostError, replyKeyOf, type ClaimedItem } from '../queue/work-queue';
import { GEN_AI, GEN_AI_OPERATION, HISHO, spanName } from '../observability/genai';
import type { Logger } from '../observability/logger';
import { valueAttribute } from '../observability/span-content';
import { captureContent, inSpan, tracingOn } from '../observability/tracing';
import type { Metrics } from '../observability/metrics';
import type { PendingActionView } from '../confirmations/types';
import { originKey, type CallFailure, type ExecutionResult, type ToolExecutor } from '../tools/executor';
import type { ToolRegistry } from '../tools/registry';
import type { EffectDescription } from '../tools/types';
import { confirmationQuestion } from '../confirmations/confirmation-text';
import type { ToolContexts } from './tool-services';
import type { FormProposal } from './confirmation-flow';
import {
  numberedOptions,
  type BrainFacts,
  type CallExecution,
  type ConfirmReason,
  type Decided,
  type DecisionFacts,
  type ModelDraft,
  type ProposalTrail,
  type TurnDecision,
} from './turn-decision';

export interface ProposalStageDeps {
  db: Db;
  brain: Pick<Brain, 'decide'>;
  registry: ToolRegistry;
  executor: ToolExecutor;
  contexts: ToolContexts;
  prompts: PromptSet;
  guardianConfig: GuardianConfig;
  stepBudget: number;
  shadowMode: boolean;
  logger: Logger;
  metrics: Metrics;
  /** The organisation directory (cached per organisation at the composition root); read when absent. */
  directory?: (orgId: string) => Promise<Directory>;
}

/** One proposal's turn so far: what the brain decided first and the trail of every proposal. */
interface Run {
  ctx: TurnContext;
  actor: Actor;
  item: ClaimedItem;
  first: BrainDecision;
  calls: LlmCallRecord[];
  trail: ProposalTrail[];
  /** The pending action this turn changes ("はい、でも期限は金曜にして"): every call with effects is asked again. */
  modifying?: PendingActionView;
}

/** What a proposal came to: a result for the model, or a decision that ends the turn. */
type Outcome = { result: ToolResult } | { decision: TurnDecision };

/** The input of {@link ProposalStage.run}: a brain decision for this turn. */
export interface RunInput {
  ctx: TurnContext;
  actor: Actor;
  decision: BrainDecision;
  item: ClaimedItem;
  modifying?: PendingActionView;
  /** The decision is a call the person wrote in a form: a refusal is said from a template (no model turn). */
  form?: boolean;
}

/**
 * Brain → Guardian → AuthorizationGate → executor, looping results back to the brain within a step
 * budget (R-B3). CONFIRM ends the turn with a question; BLOCK and DENIED go back to the model as errors
 * it must not retry blindly; nothing runs that both layers did not allow. Returns the turn's decision.
 */
export class ProposalStage {
  constructor(private readonly d: ProposalStageDeps) {}

  /** The capabilities offered to this sender: those his level allows (none for strangers and public rooms). */
  toolsFor(actor: Actor): ToolSpec[] {
    return offeredTools(actor, this.d.registry);
  }

  /** Names of offered capabilities above this sender's level (the context says so; the Gate refuses them). */
  restrictedFor(actor: Actor): string[] {
    return restrictedTools(actor, this.d.registry);
  }

  /** Asks the brain, then runs what it proposes (a brain failure is a persona error reply). */
  async think(input: Omit<RunInput, 'decision'>): Promise<TurnDecision> {
    const { ctx, actor } = input;
    let decision: BrainDecision;
    try {
      decision = await this.d.brain.decide(brainInput(ctx, actor, this.d.registry));
    } catch (err) {
      return this.brainFailure(err, ctx);
    }
    return this.run({ ...input, decision });
  }

  /**
   * Runs a call the person wrote in a form (Discord's 「変更する」) as if the brain had proposed it: the Guardian, the
   * Gate and, since it changes a pending action, a new question with the diff. A refusal is said from the persona's
   * template (the model never proposed this call, so it is not asked to explain it). The person's values are their
   * own words: confidence 1, parameters from the user's message.
   */
  async runForm(input: Omit<RunInput, 'decision'> & { proposed: FormProposal }): Promise<TurnDecision> {
    const { toolName, parameters } = input.proposed;
    const id = `form_${randomUUID().replace(/-/g, '')}`;
    const reasoning = { intent_understanding: 'The person changed the pending call’s values in a form.' };
    const confidence = { overall: 1, intent: 1, parameters: 1 };
    const sources = Object.fromEntries(Object.keys(parameters).map((k) => [k, 'user_message' as const]));
    const proposal: ToolProposal = { id, toolName, parameters, parameterSources: sources };
    const decision: BrainDecision = {
      output: { type: 'tool_call', reasoning, confidence, proposals: [proposal] },
      // As the model would have written it, so the Guardian's or the Gate's refusal pairs with a call.
      assistantContent: [{ type: 'tool_call', id, name: toolName, input: { reasoning, confidence, parameters } }],
      calls: [],
      model: 'form',
      retries: [],
    };
    return this.run({ ...input, decision, form: true });
  }

  /** Runs a brain decision's proposals, asking the brain again with their results, until it answers. */
  async run(input: RunInput): Promise<TurnDecision> {
    const { ctx, actor, item, modifying } = input;
    const r: Run = { ctx, actor, item, first: input.decision, calls: [...input.decision.calls], trail: [], modifying };
    if (ctx.degraded.includes('organisation')) {
      // Without the organisation's policies the Guardian cannot decide: execute nothing (fail-closed).
      return {
        ...this.base(r),
        kind: 'blocked',
        reasonCode: 'G_POLICIES_UNAVAILABLE',
        decider: 'SYSTEM',
        guardian: { action: 'BLOCK', reasonCode: 'G_POLICIES_UNAVAILABLE' },
        reply: { text: personaMessage(this.d.prompts, 'reply.degraded_db', ctx.language), own: true },
      };
    }
    const policies = this.policies(ctx);
    // Read (or taken from the cache) only when the model proposes a call: a plain reply needs no directory.
    let directory: Directory | null = null;
    const calledBefore = new Map<string, number>();
    let continuation: Continuation = [];
    let current = input.decision;
    for (let step = 1; ; step++) {
      const out = current.output;
      if (out.type !== 'tool_call') {
        const draft = { continuation: [...continuation, ...(current.lead ?? [])], content: current.assistantContent };
        return this.answer(ctx, out, this.base(r), summary(r.trail) ?? undefined, draft);
      }
      if (step > this.d.stepBudget) {
        return {
          ...this.base(r),
          kind: 'error',
          reasonCode: 'BUDGET_EXCEEDED',
          decider: 'SYSTEM',
          error: { category: 'SYSTEM' },
          reply: { text: personaMessage(this.d.prompts, 'error.BUDGET_EXCEEDED', ctx.language), own: true },
        };
      }
      directory ??= await (this.d.directory ?? ((orgId: string) => loadDirectory(this.d.db, orgId)))(ctx.org.id);
      const dir = directory;
      const results: ToolResult[] = [];
      for (const [index, proposal] of out.proposals.entries()) {
        const outcome = await this.traced(r, step, proposal, () =>
          this.propose(r, { step, out, proposal, policies, directory: dir, calledBefore }, index),
        );
        if ('decision' in outcome) return outcome.decision;
        results.push(outcome.result);
      }
      if (input.form) return this.formRefused(r);
      continuation = nextStep(continuation, current, results);
      try {
        current = await this.d.brain.decide({
          ...brainInput(ctx, actor, this.d.registry),
          continuation,
          purpose: `step_${step + 1}`,
          // One model for the whole tool loop (caches and thinking blocks are per model).
          route: input.decision.route,
        });
        r.calls.push(...current.calls);
      } catch (err) {
        return this.failedAfterTools(r, err);
      }
    }
  }

  /** A form's call that was not asked about: the Guardian or the Gate refused it (nothing ran). */
  private formRefused(r: Run): TurnDecision {
    const t = r.trail.at(-1);
    const lang = r.ctx.language;
    const base = { ...this.base(r), decider: 'SYSTEM' as const };
    if (t?.auth && t.auth.result === 'DENIED') {
      const reply = { text: personaMessage(this.d.prompts, 'confirm.edit_denied', lang), own: true as const };
      return { ...base, kind: 'denied', reasonCode: t.auth.reasonCode, auth: t.auth, reply };
    }
    const guardian = t?.guardian ?? { action: 'BLOCK' as const, reasonCode: 'G_POLICIES_UNAVAILABLE' as const };
    const reply = { text: personaMessage(this.d.prompts, 'confirm.edit_blocked', lang), own: true as const };
    return { ...base, kind: 'blocked', reasonCode: guardian.reasonCode, guardian, reply };
  }

  /** One proposal: Guardian, Gate, then a question, a result for the model, or the call run. */
  private async propose(
    r: Run,
    p: {
      step: number;
      out: Extract<BrainOutput, { type: 'tool_call' }>;
      proposal: ToolProposal;
      policies: GuardianPolicy[];
      directory: Directory;
      calledBefore: Map<string, number>;
    },
    index: number,
  ): Promise<Outcome> {
    const { ctx, actor, item } = r;
    const { proposal } = p;
    const tool = this.d.registry.meta(proposal.toolName);
    // The directory with the owners of the tasks the call names (a failed lookup denies below).
    const directory = await directoryFor(this.d.db, ctx.org.id, p.directory, tool, proposal).catch(() => null);
    const raw = isRecord(proposal.parameters) ? proposal.parameters : {};
    const named = directory ? resolveReferences(tool, raw, directory, actor) : null;
    const facts = { namesOthers: named?.namesOthers ?? true, senderHandles: handledTopics(actor, p.directory) };
    const verdict = this.guard(ctx, actor, p.out, proposal, p.policies, facts);
    const guardian = { action: verdict.action, reasonCode: verdict.reasonCode };
    const t: ProposalTrail = {
      step: p.step,
      tool: proposal.toolName,
      parameters: proposal.parameters,
      guardian: { ...guardian, trace: verdict.trace },
    };
    r.trail.push(t);
    if (verdict.reasonCode.startsWith('G_CONSTITUTION'))
      this.constitutionAlert(ctx, verdict.reasonCode, proposal.toolName);
    if (verdict.action === 'BLOCK') {
      const text =
        `BLOCKED (${verdict.reasonCode}): ${verdict.reason}. ` +
        'Do not retry this call; explain to the person plainly.';
      return { result: errorResult(proposal, text) };
    }
    const modified = verdict.modifiedParameters ?? proposal.parameters;
    // Department names and aliases become ids; a name that fits nobody is asked about, not refused (issue 40).
    const refs = directory && isRecord(modified) ? resolveReferences(tool, modified, directory, actor) : null;
    if (refs && refs.unresolved.length > 0) {
      t.unresolved = refs.unresolved.map((u) => ({ kind: u.kind, param: u.param }));
      return { result: errorResult(proposal, unresolvedText(refs.unresolved)) };
    }
    const params = refs?.parameters ?? modified;
    const checked = { ...proposal, parameters: params };
    const auth: AuthDecision = directory
      ? authorize({ actor, tool, proposal: checked, directory })
      : { result: 'DENIED', reasonCode: 'Z_LOOKUP_ERROR', reason: 'task owner lookup failed; denied fail-closed' };
    t.auth = { result: auth.result, reasonCode: auth.reasonCode };
    if (auth.result === 'DENIED') {
      const text =
        `DENIED (${auth.reasonCode}): the person is not permitted to do this. Do not retry; ` +
        'tell them politely without revealing any data.';
      return { result: errorResult(proposal, text) };
    }
    const clarify = (c: Extract<CallFailure, { status: 'clarify' }>): Outcome => ({
      decision: {
        ...this.base(r),
        kind: 'clarify',
        reasonCode: 'T_CLARIFICATION',
        decider: 'SYSTEM',
        guardian,
        auth: t.auth,
        reply: {
          text: ctx.language === 'en' && c.questionEn ? c.questionEn : c.question,
          options: numberedOptions(c.options),
        },
      },
    });
    const reason = this.confirmReason(r, verdict, auth, proposal.toolName);
    if (reason) {
      const described = await this.d.executor.describe(
        proposal.toolName,
        params,
        this.d.contexts.forDescribe(ctx, actor),
      );
      if (described.status === 'clarify') return clarify(described);
      if (described.status !== 'ok') {
        // The call could not run as proposed (bad input, unknown person): the model hears why, nothing is asked.
        t.execution = execTrail(described);
        return { result: toolResult(proposal, described) };
      }
      const dropped = p.out.proposals.length - index - 1;
      return {
        decision: this.confirm(r, {
          out: p.out,
          proposal: checked,
          verdict,
          auth,
          effect: described.effect,
          reason,
          dropped,
        }),
      };
    }
    if (this.d.shadowMode) {
      t.execution = { status: 'shadow', ms: 0 };
      return { result: errorResult(proposal, 'SHADOW MODE: not executed. Tell the person this is a trial run.') };
    }
    if (item.claimLost) throw new ClaimLostError();
    // Keyed by origin (this work item, the n-th call of this tool), not by parameters: a retried turn whose model
    // rewords the title gets the same key, so the handler returns what the first attempt created.
    const nth = p.calledBefore.get(proposal.toolName) ?? 0;
    p.calledBefore.set(proposal.toolName, nth + 1);
    const toolCtx = this.d.contexts.forCall(ctx, actor, originKey(item.dedupeKey, proposal.toolName, nth), item);
    const exec = await this.d.executor.run(proposal.toolName, params, toolCtx);
    t.execution = execTrail(exec);
    if (exec.status === 'clarify') return clarify(exec);
    if (exec.status === 'internal_error') {
      this.d.logger.error({ errorId: exec.errorId, tool: proposal.toolName, err: exec.internal }, 'tool failed');
    }
    return { result: toolResult(proposal, exec) };
  }

  /**
   * With tracing on, an `execute_tool` span around one proposal (GenAI conventions): the Guardian's verdict, the
   * Gate's decision and their reason codes, and what became of the call (absent when it did not run). The call's
   * arguments and result only with content capture on, redacted.
   */
  private traced(r: Run, step: number, proposal: ToolProposal, run: () => Promise<Outcome>): Promise<Outcome> {
    if (!tracingOn()) return run();
    const attributes = {
      [GEN_AI.operationName]: GEN_AI_OPERATION.executeTool,
      [GEN_AI.toolName]: proposal.toolName,
      [GEN_AI.toolCallId]: proposal.id,
      [GEN_AI.toolType]: 'function',
      [HISHO.toolStep]: step,
      ...(captureContent() ? { [GEN_AI.toolArguments]: valueAttribute(proposal.parameters) } : {}),
    };
    return inSpan(spanName.executeTool(proposal.toolName), { attributes }, async (span) => {
      const outcome = await run();
      const t = r.trail.at(-1);
      const decided = 'decision' in outcome ? outcome.decision : null;
      span.set({
        [HISHO.guardianVerdict]: t?.guardian.action,
        [HISHO.guardianReasonCode]: t?.guardian.reasonCode,
        [HISHO.gateDecision]: t?.auth?.result,
        [HISHO.gateReasonCode]: t?.auth?.reasonCode,
        [HISHO.toolStatus]: t?.execution?.status,
        [HISHO.decision]: decided?.kind,
        [HISHO.reasonCode]: decided?.reasonCode,
        ...(captureContent() && 'result' in outcome
          ? { [GEN_AI.toolResult]: valueAttribute(outcome.result.content) }
          : {}),
      });
      return outcome;
    });
  }

  /** Why this call is asked about first, if it is: the Guardian, the Gate, or because it changes a pending one. */
  private confirmReason(r: Run, verdict: GuardianVerdict, auth: AuthDecision, toolName: string): ConfirmReason | null {
    if (verdict.action === 'CONFIRM') return 'guardian';
    if (auth.result === 'CONFIRM') return 'gate';
    // A changed proposal is always asked again, whatever the Guardian says: nothing runs on that turn.
    const tool = this.d.registry.meta(toolName);
    return r.modifying !== undefined && hasEffects(tool ?? { effects: [] }) ? 'change' : null;
  }

  /**
   * The confirmation question for a call both layers let through: stated from its checked parameters,
   * with the Guardian's real verdict and the Gate's decision recorded side by side.
   */
  private confirm(
    r: Run,
    c: {
      out: Extract<BrainOutput, { type: 'tool_call' }>;
      proposal: ToolProposal;
      verdict: GuardianVerdict;
      auth: AuthDecision;
      effect: EffectDescription;
      reason: ConfirmReason;
      dropped: number;
    },
  ): TurnDecision {
    const { ctx, actor } = r;
    const { verdict, auth } = c;
    const reasonCode =
      c.reason === 'guardian' ? verdict.reasonCode : c.reason === 'gate' ? auth.reasonCode : 'S_CHANGE_RECONFIRM';
    const confirmationType = c.reason === 'guardian' ? (verdict.confirmationType ?? 'single') : 'single';
    const tool = this.d.registry.meta(c.proposal.toolName);
    // The model's summary of a call that has not run may not say it was done (issue 29): asked without it.
    const claimed = checkReplyClaims(c.proposal.summary ?? '', new Set());
    const claimCheck =
      claimed.action === 'ALLOW'
        ? null
        : { reasonCode: claimed.reasonCode, claims: claimed.claims.map((x) => x.text), corrected: 'dropped' };
    if (claimCheck) this.d.metrics.replyClaimCorrections.inc({ decision: 'CONFIRM', outcome: 'dropped' });
    const question = confirmationQuestion(this.d.prompts, {
      proposal: claimCheck ? { ...c.proposal, summary: undefined } : c.proposal,
      tool,
      effect: c.effect,
      lang: ctx.language,
      modifying: r.modifying,
      verdict: c.reason === 'guardian' ? verdict : { action: 'CONFIRM' },
      auth,
    });
    const msg = ctx.message;
    const pending = this.d.shadowMode
      ? null
      : {
          key: { platform: msg.platform, roomId: msg.roomId, accountId: msg.senderAccountId },
          orgId: ctx.org.id,
          memberId: actor.memberId,
          confirmationType,
          // The Guardian's verdict is kept with the call, so the turn that runs it records the real one.
          proposal: { ...question.stored, guardian: { action: verdict.action, reasonCode: verdict.reasonCode } },
          originalMessage: msg.text,
          reasoning: reasoningText(c.out.reasoning),
          confidence: c.out.confidence.overall,
          reasonCode,
          questionKey: replyKeyOf(r.item),
        };
    return {
      ...this.base(r),
      kind: 'confirm',
      reasonCode,
      decider: 'SYSTEM',
      guardian: { action: verdict.action, reasonCode: verdict.reasonCode },
      auth: { result: auth.result, reasonCode: auth.reasonCode },
      reply: { text: question.text, title: question.title },
      notes: {
        dropped: c.dropped,
        confirmationType,
        ...(r.modifying ? { modifies: r.modifying.id } : {}),
        ...(claimCheck ? { claimCheck } : {}),
      },
      ask: { by: c.reason, confirmationType, pending },
    };
  }

  /**
   * The brain's words (a text or a question) as the turn's reply, after the constitution check on its
   * reasoning. `decided`: what the turn already is (a tool turn's summary, a confirmed action's report),
   * which wins over the plain reply labels; without it the answer is a `reply` or a `clarify`. `draft`: the
   * turn's steps and the model's answer as sent (the reply's claims check may ask it to write again).
   */
  answer(
    ctx: TurnContext,
    output: Exclude<BrainOutput, { type: 'tool_call' }>,
    facts: DecisionFacts,
    decided?: Decided,
    draft: ModelDraft = { continuation: [], content: null },
  ): TurnDecision {
    const meta = checkBrainOutputMeta(output.reasoning, output.confidence, this.d.guardianConfig);
    if (meta.action === 'BLOCK') {
      if (meta.reasonCode.startsWith('G_CONSTITUTION')) this.constitutionAlert(ctx, meta.reasonCode);
      return {
        ...facts,
        ...decided,
        kind: 'blocked',
        reasonCode: meta.reasonCode,
        decider: 'SYSTEM',
        guardian: { action: 'BLOCK', reasonCode: meta.reasonCode },
        notes: { constitution: meta.reason },
        reply: {
          text: personaMessage(this.d.prompts, 'error.LLM_INVALID_OUTPUT', ctx.language, { errorId: '-' }),
          own: true,
        },
      };
    }
    const clarify = output.type === 'clarification_needed';
    const reply = clarify
      ? { text: output.question, options: numberedOptions(output.options), written: draft }
      : { text: output.text, written: draft };
    if (decided) return { ...facts, ...decided, reply } as TurnDecision;
    return {
      ...facts,
      kind: clarify ? 'clarify' : 'reply',
      reasonCode: clarify ? 'B_CLARIFICATION' : 'B_TEXT_RESPONSE',
      decider: 'LLM',
      reply,
    };
  }

  /** The turn's facts every decision of this stage carries: the brain's first answer, the trail, the calls. */
  private base(r: Pick<Run, 'ctx' | 'first' | 'calls' | 'trail'>): DecisionFacts {
    const { ctx, first } = r;
    const brain: BrainFacts = {
      model: first.model,
      outputType: first.output.type,
      reasoning: first.output.reasoning,
      confidence: first.output.confidence,
    };
    return {
      calls: r.calls,
      brain,
      proposals: r.trail,
      context: {
        historyTurns: ctx.history.length,
        summary: ctx.summary !== null,
        sections: ctx.sections.map((s) => s.title),
        degraded: ctx.degraded,
        policies: ctx.policies.length,
        language: ctx.language,
      },
      notes: first.retries.length > 0 ? { retries: first.retries } : undefined,
    };
  }

  /** The brain failed after calls ran: the person hears they ran (or a persona error). */
  private failedAfterTools(r: Run, err: unknown): TurnDecision {
    const app = asAppError(err, 'LLM_UNAVAILABLE');
    if (err instanceof BrainFailure) r.calls.push(...err.calls);
    const executed = r.trail.some((x) => x.execution?.status === 'ok');
    const text = executed
      ? personaMessage(this.d.prompts, 'confirm.executed', r.ctx.language, { summary: '' })
      : personaMessage(this.d.prompts, `error.${app.code}`, r.ctx.language, { errorId: app.errorId });
    return {
      ...this.base(r),
      ...summary(r.trail),
      kind: executed ? 'executed' : 'error',
      reasonCode: app.code,
      decider: 'SYSTEM',
      error: { errorId: app.errorId, category: app.category },
      reply: { text, own: true },
    } as TurnDecision;
  }

  /** The brain could not decide: a persona error reply naming the error id (R-B5). */
  private brainFailure(err: unknown, ctx: TurnContext): TurnDecision {
    const app = asAppError(err, 'LLM_UNAVAILABLE');
    const calls = err instanceof BrainFailure ? err.calls : [];
    const retries = err instanceof BrainFailure ? err.retries : [];
    this.d.logger.warn(
      { errorId: app.errorId, code: app.code, err: app.message },
      'brain failed; answering with a persona error message',
    );
    this.d.metrics.errors.inc({ code: app.code });
    return {
      kind: 'error',
      reasonCode: app.code,
      decider: 'SYSTEM',
      calls,
      context: { degraded: ctx.degraded },
      error: { errorId: app.errorId, category: app.category },
      notes: { retries, error: app.message },
      reply: {
        text: personaMessage(this.d.prompts, `error.${app.code}`, ctx.language, { errorId: app.errorId }),
        own: true,
      },
    };
  }

  private constitutionAlert(ctx: TurnContext, reasonCode: string, tool?: string): void {
    this.d.metrics.constitutionViolations.inc({ reason_code: reasonCode });
    const where = tool ? 'by the LLM proposal' : 'in a brain answer';
    this.d.logger.error(
      { alert: 'constitution_violation', reasonCode, ...(tool ? { tool } : {}), roomId: ctx.room.roomId },
      `ADMIN ALERT: constitution violation ${where}`,
    );
  }

  /** Guardian verdict for one proposal (pure; the turn's facts passed in). */
  private guard(
    ctx: TurnContext,
    actor: Actor,
    out: Extract<BrainOutput, { type: 'tool_call' }>,
    proposal: ToolProposal,
    policies: GuardianPolicy[],
    facts: { namesOthers: boolean; senderHandles: readonly string[] },
  ): GuardianVerdict {
    return evaluateProposal({
      proposal,
      tool: this.d.registry.meta(proposal.toolName),
      reasoning: out.reasoning,
      confidence: out.confidence,
      policies,
      config: this.d.guardianConfig,
      context: {
        senderMemberId: actor.memberId ?? undefined,
        senderName: actor.name ?? undefined,
        now: ctx.now,
        timezone: ctx.org.timezone,
        calendar: { closingDays: ctx.org.closingDays ?? [] },
        ...facts,
      },
    });
  }

  /** The organisation's policies that carry a machine rule (CEO teachings, Guardian priority 4). */
  private policies(ctx: TurnContext): GuardianPolicy[] {
    return ctx.policies
      .filter((p) => p.rule !== undefined && p.rule !== null)
      .map((p) => ({ id: p.id, title: p.title, rule: p.rule as GuardianPolicy['rule'] }));
  }
}

/** How a call went, for the trail. */
/**
 * The capabilities a sender is offered: every enabled one his level allows (none for strangers and public rooms)
 * — what the brain is given for a turn (the evaluation set builds its requests with the same list). The core ones
 * are loaded in every request, the same for every member; the others are found with the tool search, which can
 * only find these (decision record 0010). Permission is still the AuthorizationGate's, per proposal.
 */
export function offeredTools(actor: Actor, registry: Pick<ToolRegistry, 'all'>): ToolSpec[] {
  return filterToolsForActor(actor, registry.all());
}

/** Names of capabilities above this sender's level (the context says so; the Gate refuses them). */
export function restrictedTools(actor: Actor, registry: Pick<ToolRegistry, 'all'>): string[] {
  return toolsAboveActor(actor, registry.all()).map((t) => t.name);
}

/**
 * What the brain is given for a turn's decision: the context, the capabilities offered to this sender and those
 * they may not use. The one place it is put together, for the service and the evaluation set (`eval/`).
 */
export function brainInput(
  ctx: TurnContext,
  actor: Actor,
  registry: Pick<ToolRegistry, 'all'>,
): { ctx: TurnContext; tools: ToolSpec[]; restricted: string[] } {
  return { ctx, tools: offeredTools(actor, registry), restricted: restrictedTools(actor, registry) };
}

export function execTrail(exec: ExecutionResult): CallExecution {
  switch (exec.status) {
    case 'ok':
      return { status: 'ok', ms: exec.ms, output: exec.output };
    case 'error':
      return { status: 'error', ms: exec.ms, code: exec.code };
    case 'clarify':
      return { status: 'clarify', ms: exec.ms };
    case 'internal_error':
      return { status: 'internal_error', ms: exec.ms, errorId: exec.errorId };
  }
}

/**
 * A call's result for the model: outputs (stored text in them neutralised: data, never instructions) and
 * model-safe errors; internal errors only as an id.
 */
export function toolResult(proposal: ToolProposal, exec: ExecutionResult): ToolResult {
  if (exec.status === 'ok') {
    return { proposalId: proposal.id, content: JSON.stringify(neutraliseValue(exec.output)), isError: false };
  }
  if (exec.status === 'error') return errorResult(proposal, `${exec.code}: ${exec.modelMessage}`);
  if (exec.status === 'internal_error') {
    return errorResult(
      proposal,
      `The tool failed (error id ${exec.errorId}). Apologise and suggest trying again later.`,
    );
  }
  return errorResult(proposal, 'Needs clarification.');
}

/**
 * What the model hears about names the directory does not know (issue 40): not a refusal — who or which is meant
 * is asked, with the near matches the sender may see.
 */
function unresolvedText(unresolved: readonly UnresolvedReference[]): string {
  const lines = unresolved.map((u) => {
    const what = u.kind === 'person' ? 'member' : 'department';
    const near = u.near.length > 0 ? ` Near matches: ${u.near.join(', ')}.` : '';
    return u.ambiguous
      ? `"${u.ref}" fits several departments: ${u.near.join(', ')}.`
      : `No ${what} matches "${u.ref}".${near}`;
  });
  return (
    `NOT FOUND (${unresolved[0]!.kind === 'person' ? 'T_UNKNOWN_PERSON' : 'T_UNKNOWN_DEPARTMENT'}): ` +
    `${lines.join(' ')} Nothing was done and nothing is refused: ask the person who or which they mean ` +
    '(offer the near matches, if any); do not guess.'
  );
}

function errorResult(proposal: ToolProposal, text: string): ToolResult {
  return { proposalId: proposal.id, content: text, isError: true };
}

const STRICTNESS = ['BLOCK', 'CONFIRM', 'MODIFY', 'ALLOW'];

/** A tool turn's outcome: the strictest Guardian verdict and Gate decision of its proposals, and what ran. */
function summary(trail: ProposalTrail[]): Decided | null {
  if (trail.length === 0) return null;
  const worst = [...trail].sort(
    (a, b) => STRICTNESS.indexOf(a.guardian.action) - STRICTNESS.indexOf(b.guardian.action),
  )[0]!;
  const denied = trail.find((t) => t.auth?.result === 'DENIED');
  const executed = trail.some((t) => t.execution?.status === 'ok');
  const guardian = { action: worst.guardian.action, reasonCode: worst.guardian.reasonCode };
  const auth = denied?.auth ?? trail.find((t) => t.auth)?.auth;
  const common = {
    guardian,
    auth,
    execution: trail.map((t) => ({ tool: t.tool, ...t.execution })),
    decider: 'SYSTEM' as const,
  };
  if (executed) return { ...common, kind: 'executed', reasonCode: 'T_EXECUTED' };
  if (guardian.action === 'BLOCK') return { ...common, kind: 'blocked', reasonCode: guardian.reasonCode };
  if (denied) return { ...common, kind: 'denied', reasonCode: denied.auth!.reasonCode };
  // A name the directory does not know: the person is asked who is meant (counted apart from denials).
  const unknown = trail.find((t) => t.unresolved)?.unresolved?.[0];
  if (unknown) {
    const reasonCode = unknown.kind === 'person' ? 'T_UNKNOWN_PERSON' : 'T_UNKNOWN_DEPARTMENT';
    return { ...common, kind: 'clarify', reasonCode };
  }
  return { ...common, kind: 'reply', reasonCode: 'B_TEXT_RESPONSE' };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
