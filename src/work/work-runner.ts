import { randomUUID } from 'node:crypto';
import type { InboundMessage, Platform } from '../core/chat';
import { audienceOf, loadActor, type Actor } from '../authorization';
import type { PromptSet } from '../brain/prompts';
import { detectLanguage, type Language } from '../core/language';
import { personaMessage } from '../core/messages';
import { neutralise } from '../context/quote';
import type { ContextBuilder } from '../context/context-builder';
import type { TurnContext } from '../context/types';
import type { Db } from '../db/prisma';
import { AppError } from '../core/app-error';
import { ABANDONED, ClaimLostError, replyKeyOf, type ClaimedItem, type WorkOutcome } from '../queue/work-queue';
import type { Logger } from '../observability/logger';
import { turnAudit } from '../turn/turn-audit';
import type { TurnRecorder } from '../turn/turn-recorder';
import type { Outbox } from '../queue/outbox';
import type { ConfirmationFlow } from '../turn/confirmation-flow';
import type { ProposalStage } from '../turn/proposal-stage';
import type { ReplyComposer } from '../turn/reply';
import type { ProposalTrail, TurnDecision } from '../turn/turn-decision';
import { stepOrigin } from './keys';
import {
  afterFailure,
  afterStep,
  contextLines,
  exhausted,
  readContext,
  withBudget,
  type StepContext,
  type StepOutcome,
} from './step-context';
import { BACKGROUND_WORK_KIND, FINISHED, type WorkRow, type WorkStore } from './work-store';

/** Configured limits of background work (WORK_* settings). */
export interface WorkLimits {
  maxSteps: number;
  maxCostUsd: number;
  maxMinutes: number;
  /** How long a work waiting for a confirmation waits before it looks at the answer again. */
  confirmPollMs: number;
}

export interface WorkRunnerDeps {
  db: Db;
  store: WorkStore;
  proposals: Pick<ProposalStage, 'think'>;
  confirmations: Pick<ConfirmationFlow, 'open'>;
  replies: Pick<ReplyComposer, 'compose'>;
  contextBuilder: ContextBuilder;
  outbox: Outbox;
  recorder: TurnRecorder;
  prompts: PromptSet;
  logger: Logger;
  limits: WorkLimits;
  defaultUserLevel: number;
  now?: () => Date;
}

/** Failed attempts at one step before the work stops (issue 12: "a step that fails twice"). */
export const STEP_FAILURES_MAX = 2;

/** How a step went, from its turn decision. */
type StepResult =
  | { kind: 'progress'; outcome: StepOutcome }
  | { kind: 'done'; text: string }
  | { kind: 'confirm'; decision: TurnDecision }
  | { kind: 'failed'; reason: string };

/** The member a work item is for, as its steps need them. */
interface Requester {
  id: string;
  name: string;
  level: number;
  departmentId: string | null;
  title: string | null;
}

/**
 * Runs background work (R-W1, seed 002 §7 PDCA): each claim of a `background_work` item runs steps until
 * the work is done, stops, or waits for the requester's confirmation. A step asks the brain for the next
 * calls (plan), runs them through the SAME ProposalStage as a turn — Guardian, AuthorizationGate as the
 * requester, executor (act) — and reads the brain's account of the step (check); the step context is
 * persisted after every step (act). Calls are keyed by work and step, so a step run again after a crash
 * returns what its first run did. Budget used up → BUDGET_EXCEEDED; a step failing twice → stopped with the
 * reason; both reported to the requester once. A requester no longer in the directory → cancelled.
 */
export class WorkRunner {
  constructor(private readonly d: WorkRunnerDeps) {}

  private now(): Date {
    return this.d.now?.() ?? new Date();
  }

  /** The `work` item handler for `background_work` items (other kinds are not this runner's). */
  async handle(item: ClaimedItem): Promise<WorkOutcome | void> {
    const p = item.payload as { kind?: string; workId?: string };
    if (p.kind !== BACKGROUND_WORK_KIND || !p.workId) return;
    const log = this.d.logger.child({ workId: p.workId, workItemId: String(item.id) });
    const w = await this.d.store.get(p.workId);
    if (!w || FINISHED.includes(w.status)) return;
    if (item.attempts > item.maxAttempts) {
      // Every allowed attempt died mid-step (a crash, not an error): stop and tell the requester, once.
      await this.stopOnError(item, w, 'W_ABANDONED', 'the worker stopped on every attempt', log);
      throw new AppError('INTERNAL', ABANDONED, { retryable: false });
    }
    try {
      return await this.run(item, w, log);
    } catch (err) {
      if (err instanceof ClaimLostError || item.attempts < item.maxAttempts) throw err;
      // The last attempt failed too: the work stops and says so (nothing is silently dropped), and its item gives
      // up with this error — failed, listed in /admin, alerted — rather than ending `done`.
      await this.stopOnError(item, w, 'W_ERROR', (err as Error).name || 'error', log);
      throw err;
    }
  }

  /** Ends the work `failed` with the requester's report enqueued; its work item is left to the queue to give up. */
  private async stopOnError(
    item: ClaimedItem,
    w: WorkRow,
    reasonCode: 'W_ABANDONED' | 'W_ERROR',
    reason: string,
    log: Logger,
  ): Promise<void> {
    log.error({ reasonCode, reason }, 'background work stopped after its last attempt');
    const fresh = (await this.d.store.get(w.id)) ?? w;
    await this.d.store.finish(item, w.id, {
      status: 'failed',
      reasonCode,
      reason,
      ctx: readContext(fresh.stepContext),
      costUsd: fresh.costUsd,
      report: true,
      givingUp: true,
    });
  }

  private async run(item: ClaimedItem, start: WorkRow, log: Logger): Promise<WorkOutcome | void> {
    let w = start;
    const member = await this.requester(w);
    if (!member) return this.requesterLeft(item, w, log);
    if (w.status === 'queued' || w.maxSteps === null || w.maxCostUsd === null || w.deadlineAt === null) {
      const requested = (w.stepContext as { requested?: { maxMinutes?: number } }).requested;
      const minutes = Math.min(requested?.maxMinutes ?? this.d.limits.maxMinutes, this.d.limits.maxMinutes);
      const began = await this.d.store.begin(item, w.id, {
        maxSteps: this.d.limits.maxSteps,
        maxCostUsd: this.d.limits.maxCostUsd,
        deadlineAt: new Date(this.now().getTime() + minutes * 60_000),
      });
      if (!began) return;
      w = (await this.d.store.get(w.id))!;
    }
    if (w.status === 'waiting') {
      const next = await this.afterConfirmation(item, w, log);
      if (next !== 'resumed') return next === 'completed' ? { completed: true } : undefined;
      w = (await this.d.store.get(w.id))!;
    }
    return this.steps(item, w, member, log);
  }

  /** The requester as a current member of the organisation, or null when they left (or were deactivated). */
  private async requester(w: WorkRow): Promise<Requester | null> {
    const m = await this.d.db.member.findUnique({ where: { orgId_id: { orgId: w.orgId, id: w.requesterMemberId } } });
    return m && m.active ? m : null;
  }

  private async requesterLeft(item: ClaimedItem, w: WorkRow, log: Logger): Promise<WorkOutcome> {
    const ctx = readContext(w.stepContext);
    await this.d.store.finish(item, w.id, {
      status: 'cancelled',
      reasonCode: 'W_REQUESTER_LEFT',
      reason: 'the requester is no longer in the organisation',
      ctx,
      costUsd: w.costUsd,
      report: false,
    });
    log.warn({ reasonCode: 'W_REQUESTER_LEFT' }, 'background work cancelled: the requester left the organisation');
    return { completed: true };
  }

  /**
   * The work waited for the requester's answer to a step's confirmation: executed → the step is done and
   * the work goes on; cancelled, expired or failed → the work stops (reported); still open → look again later.
   */
  private async afterConfirmation(
    item: ClaimedItem,
    w: WorkRow,
    log: Logger,
  ): Promise<'resumed' | 'completed' | 'stopped'> {
    const pending = w.pendingActionId
      ? await this.d.db.pendingAction.findUnique({ where: { id: w.pendingActionId } })
      : null;
    const now = this.now();
    const open =
      pending && (pending.status === 'approved' || (pending.status === 'pending' && pending.expiresAt > now));
    if (open) {
      const ok = await this.d.store.pollAgain(item, w, new Date(now.getTime() + this.d.limits.confirmPollMs));
      return ok ? 'completed' : 'stopped';
    }
    let ctx = readContext(w.stepContext);
    if (pending?.status === 'executed') {
      const proposal = pending.proposal as { toolName?: string };
      const tool = String(proposal.toolName ?? 'tool');
      const n = w.stepsDone + 1;
      const facts = factsOf(tool, pending.result);
      ctx = afterStep(ctx, {
        n,
        result: `the requester confirmed ${tool}; it ran`,
        tools: [{ tool, status: 'ok' }],
        facts: facts.lines,
        artifactIds: facts.artifactIds,
      });
      if (!(await this.d.store.resume(item, w.id))) return 'stopped';
      const saved = await this.d.store.saveStep(item, w.id, {
        ctx: withBudget(ctx, { ...w, stepsDone: n }),
        stepsDone: n,
        costUsd: w.costUsd,
      });
      return saved ? 'resumed' : 'stopped';
    }
    // A question past its expiry may still read `pending` until the session is next looked at.
    const status = pending?.status === 'pending' ? 'expired' : (pending?.status ?? 'missing');
    log.info({ pending: status }, 'background work stopped: its confirmation was not given');
    await this.d.store.finish(item, w.id, {
      status: 'failed',
      reasonCode: 'W_CONFIRMATION_DECLINED',
      reason: `confirmation ${status}`,
      ctx,
      costUsd: w.costUsd,
      report: true,
    });
    return 'completed';
  }

  /** Steps until the work is done, stops, waits for a confirmation, or is cancelled. */
  private async steps(item: ClaimedItem, start: WorkRow, member: Requester, log: Logger): Promise<WorkOutcome | void> {
    let w = start;
    let ctx = readContext(w.stepContext);
    for (;;) {
      if (item.claimLost) throw new ClaimLostError();
      const fresh = await this.d.store.get(w.id);
      // Cancelled (by the requester or an admin) since the last step: nothing further, no report.
      if (!fresh || fresh.status !== 'running') return;
      w = fresh;
      ctx = readContext(w.stepContext);
      const limit = exhausted(w, this.now());
      if (limit) {
        log.info({ limit, steps: w.stepsDone, costUsd: w.costUsd }, 'background work stopped: BUDGET_EXCEEDED');
        await this.d.store.finish(item, w.id, {
          status: 'failed',
          reasonCode: 'BUDGET_EXCEEDED',
          reason: `${limit} budget used up`,
          ctx: withBudget(ctx, w),
          costUsd: w.costUsd,
          report: true,
        });
        return { completed: true };
      }
      const n = w.stepsDone + 1;
      const step = await this.step(item, w, member, ctx, n);
      if ('left' in step) return this.requesterLeft(item, w, log);
      const costUsd = w.costUsd + step.costUsd;
      const r = step.result;
      if (r.kind === 'progress') {
        ctx = withBudget(afterStep(ctx, r.outcome), { ...w, stepsDone: n, costUsd });
        if (!(await this.d.store.saveStep(item, w.id, { ctx, stepsDone: n, costUsd }))) return;
        log.info({ step: n }, 'background work step done');
        continue;
      }
      if (r.kind === 'done') {
        ctx = withBudget({ ...ctx, last_result: r.text.slice(0, 300) }, { ...w, costUsd });
        await this.d.store.finish(item, w.id, {
          status: 'done',
          reasonCode: 'W_DONE',
          reason: null,
          ctx,
          costUsd,
          report: true,
        });
        log.info({ steps: w.stepsDone }, 'background work done');
        return { completed: true };
      }
      if (r.kind === 'confirm') {
        const waiting = await this.ask(item, w, step.turn, r.decision);
        // Calls of the step that ran before the one that needs the answer are kept as facts.
        const ran = factsOfTrail(trailOf(r.decision));
        ctx = {
          ...ctx,
          facts: [...ctx.facts, ...ran.facts],
          artifact_refs: [...ctx.artifact_refs, ...ran.artifactIds],
        };
        if (!waiting) {
          ctx = afterFailure(ctx, n, 'the confirmation question could not be asked');
        } else {
          await this.d.store.wait(item, w, {
            ctx: withBudget(ctx, { ...w, costUsd }),
            costUsd,
            pendingActionId: waiting,
            runAt: new Date(this.now().getTime() + this.d.limits.confirmPollMs),
          });
          log.info({ step: n, pendingActionId: waiting }, 'background work waits for the requester to confirm');
          return { completed: true };
        }
      } else {
        ctx = afterFailure(ctx, n, r.reason);
      }
      if ((ctx.failure?.count ?? 0) >= STEP_FAILURES_MAX) {
        log.warn({ step: n, reason: ctx.failure?.reason }, 'background work stopped: a step failed twice');
        await this.d.store.finish(item, w.id, {
          status: 'failed',
          reasonCode: 'W_STEP_FAILED',
          reason: `step ${n} failed twice: ${ctx.failure?.reason ?? ''}`,
          ctx: withBudget(ctx, { ...w, costUsd }),
          costUsd,
          report: true,
        });
        return { completed: true };
      }
      if (!(await this.d.store.saveStep(item, w.id, { ctx, stepsDone: w.stepsDone, costUsd }))) return;
    }
  }

  /**
   * One step as a turn of the requester in the origin room: the brain proposes (plan), the proposal stage
   * runs the calls through Guardian → Gate → executor (act), the brain's answer says how it went (check).
   * The turn is recorded like any other (kind `work`).
   */
  private async step(
    item: ClaimedItem,
    w: WorkRow,
    member: Requester,
    sc: StepContext,
    n: number,
  ): Promise<{ left: true } | { result: StepResult; costUsd: number; turn: StepTurn }> {
    const started = performance.now();
    const lang = detectLanguage(w.goal);
    const msg: InboundMessage = {
      platform: w.platform as Platform,
      orgId: w.orgId,
      roomId: w.roomId,
      senderAccountId: w.accountId,
      senderName: member.name,
      text: personaMessage(this.d.prompts, 'work.step_task', lang, { step: n, goal: neutralise(w.goal) }),
      rawText: '',
      mentions: [],
      platformMessageId: stepOrigin(w.id, n),
      sentAt: this.now().toISOString(),
    };
    const actor = await loadActor(this.d.db, {
      orgId: w.orgId,
      platform: w.platform,
      roomId: w.roomId,
      accountId: w.accountId,
      defaultLevel: this.d.defaultUserLevel,
    });
    // The Gate decides as the requester: their account must still be theirs.
    if (actor.memberId !== w.requesterMemberId) return { left: true };
    const ctx = await this.d.contextBuilder.build({
      msg,
      now: this.now(),
      sender: {
        known: true,
        memberId: member.id,
        name: member.name,
        level: actor.level,
        departmentId: member.departmentId,
        departmentName: null,
        title: member.title,
        preferences: {},
      },
      room: { platform: w.platform, roomId: w.roomId, name: null, authority: actor.roomAuthority },
      audience: audienceOf(actor),
    });
    ctx.sections.push({ title: 'バックグラウンド作業', lines: contextLines(sc, w.goal) });
    const stepItem = asStep(item, stepOrigin(w.id, n));
    const decision = await this.d.proposals.think({ ctx, actor, item: stepItem });
    const costUsd = decision.calls.reduce((sum, c) => sum + (c.costUsd ?? 0), 0);
    const turn: StepTurn = { msg, ctx, actor, stepItem, lang };
    await this.d.recorder
      .record({
        ...turnAudit(decision, {
          id: randomUUID(),
          orgId: w.orgId,
          platform: w.platform,
          roomId: w.roomId,
          accountId: w.accountId,
          memberId: member.id,
          workItemId: item.id,
          input: `background work ${w.id} step ${n}`,
          finalReply: decision.reply.text,
          totalMs: performance.now() - started,
          shadow: false,
        }),
        kind: 'work',
      })
      .catch((err: Error) => this.d.logger.warn({ err: err.name }, 'background work step could not be recorded'));
    return { result: await this.classify(decision, n), costUsd, turn };
  }

  /** What a step's decision means for the work. */
  private async classify(decision: TurnDecision, n: number): Promise<StepResult> {
    const trail = trailOf(decision);
    if (decision.kind === 'confirm') return { kind: 'confirm', decision };
    if (decision.kind === 'reply' && trail.length === 0) return { kind: 'done', text: decision.reply.text };
    if (decision.kind === 'executed') {
      const { facts, artifactIds } = factsOfTrail(trail);
      return {
        kind: 'progress',
        outcome: {
          n,
          result: decision.reply.text,
          tools: trail.map((t) => ({ tool: t.tool, status: t.execution?.status ?? t.guardian.action })),
          facts,
          artifactIds,
        },
      };
    }
    const calls = trail.map(
      (t) => `${t.tool}: ${t.execution?.status ?? t.auth?.result ?? (t.unresolved ? 'NOT FOUND' : t.guardian.action)}`,
    );
    const why = `${decision.kind} (${decision.reasonCode})${calls.length ? ` — ${calls.join(', ')}` : ''}`;
    return { kind: 'failed', reason: why };
  }

  /**
   * A step's call needs the requester's confirmation: the pending action is stored (the same flow as a turn)
   * and the question is posted to the origin room under the step's reply key, mentioning the requester.
   * Returns the pending action's id, or null when nothing can be approved (the reply check blocked it).
   */
  private async ask(item: ClaimedItem, w: WorkRow, turn: StepTurn, decision: TurnDecision): Promise<string | null> {
    const composed = this.d.replies.compose(decision, turn.lang);
    const asked = await this.d.confirmations.open(composed, turn.lang);
    const execution = asked.execution as { status?: string; pendingActionId?: string } | undefined;
    if (asked.kind !== 'confirm' || execution?.status !== 'pending_confirmation' || !execution.pendingActionId) {
      return null;
    }
    await this.d.outbox.send(
      replyKeyOf(turn.stepItem),
      {
        platform: w.platform as Platform,
        roomId: w.roomId,
        text: asked.reply.text,
        title: asked.reply.title,
        options: asked.reply.options,
        kind: 'notice',
        mentionAccountIds: [w.accountId],
      },
      item,
    );
    return execution.pendingActionId;
  }
}

/** What one step's turn was built from (a confirmation question is asked from it). */
interface StepTurn {
  msg: InboundMessage;
  ctx: TurnContext;
  actor: Actor;
  stepItem: ClaimedItem;
  lang: Language;
}

/**
 * The work item as one step sees it: the same claim (id, token, live `claimLost`), with the step's origin
 * as its key — so every call of the step gets an idempotency key of this work and step.
 */
function asStep(item: ClaimedItem, origin: string): ClaimedItem {
  return Object.create(item, { dedupeKey: { value: origin, enumerable: true } }) as ClaimedItem;
}

/** The proposals a step's own loop made (a step never carries a confirmed action's record). */
function trailOf(decision: TurnDecision): ProposalTrail[] {
  return (decision.proposals ?? []).filter((p): p is ProposalTrail => 'guardian' in p);
}

/** The facts of the calls of a step that ran. */
function factsOfTrail(trail: ProposalTrail[]): { facts: string[]; artifactIds: string[] } {
  const facts: string[] = [];
  const artifactIds: string[] = [];
  for (const t of trail) {
    if (t.execution?.status !== 'ok') continue;
    const f = factsOf(t.tool, (t.execution as { output?: unknown }).output);
    facts.push(...f.lines);
    artifactIds.push(...f.artifactIds);
  }
  return { facts, artifactIds };
}

/** Short facts from a call's output for the step context (ids to refer to later); artifact ids apart. */
export function factsOf(tool: string, output: unknown): { lines: string[]; artifactIds: string[] } {
  if (!output || typeof output !== 'object') return { lines: [], artifactIds: [] };
  const o = output as Record<string, unknown>;
  const ids = Object.entries(o)
    .filter(([k, v]) => /Id$/.test(k) && typeof v === 'string')
    .map(([k, v]) => `${k}=${String(v)}`);
  const title = typeof o.title === 'string' ? ` 「${o.title}」` : '';
  const artifactIds = typeof o.artifactId === 'string' ? [o.artifactId] : [];
  return { lines: ids.length > 0 || title ? [`${tool}:${title} ${ids.join(' ')}`.trim()] : [], artifactIds };
}
