import { randomUUID } from 'node:crypto';
import type { FoundMessage, InboundMessage, OutboundReply } from '../adapters/types';
import { audienceOf, type Actor } from '../authorization';
import type { PromptSet } from '../brain/prompts';
import { detectLanguage, type Language } from '../core/language';
import { personaMessage } from '../core/messages';
import type { ContextBuilder, ContextPrefetch } from '../context/context-builder';
import type { SenderProfile, TurnContext } from '../context/types';
import { AppError, asAppError, givingUp } from '../errors/app-error';
import { messageDedupeKey } from '../intake/intake';
import { ClaimLostError, replyKeyOf, type ClaimedItem, type WorkOutcome } from '../intake/work-queue';
import type { SqlParams } from '../db/sql';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { SelfCritic } from '../observability/self-critique';
import { turnAudit } from '../observability/turn-audit';
import type { TurnRecorder } from '../observability/turn-recorder';
import { deliveryRecord, mayHavePosted, type Delivered, type Outbox, type TakeAhead } from '../outbox/outbox';
import type { BrainStateManager } from '../state/brain-state-manager';
import { clarificationStep } from '../state/clarification-budget';
import type { SessionKey } from '../state/session-key';
import type { TurnPrelude, TurnStore } from '../state/turn-store';
import type { PendingActionView, SessionView } from '../state/types';
import type { ConfirmationFlow } from './confirmation-flow';
import type { ProposalStage } from './proposal-stage';
import type { ReplyComposer } from './reply';
import { DECISION_LABELS, type TurnDecision } from './turn-decision';

export interface TurnRunnerDeps {
  store: TurnStore;
  contextBuilder: ContextBuilder;
  states: BrainStateManager;
  confirmations: ConfirmationFlow;
  proposals: ProposalStage;
  replies: ReplyComposer;
  outbox: Outbox;
  recorder: TurnRecorder;
  prompts: PromptSet;
  logger: Logger;
  metrics: Metrics;
  defaultUserLevel: number;
  shadowMode: boolean;
  /** False when no ANTHROPIC_API_KEY: the bot answers with a setup hint instead of thinking. */
  llmConfigured: boolean;
  /** Self-critique sampling (R-B6): a sampled turn stores its critique item with its record; absent when off. */
  critic?: Pick<SelfCritic, 'sample' | 'enqueued'>;
  /** A conversation summary was enqueued by a turn's last statement (R-X4): wakes a worker for it. */
  onSummaryEnqueued?: () => void;
  now?: () => Date;
}

/** A decision with what frames its reply (persona texts added after the reply check). */
interface Framed {
  decision: TurnDecision;
  /** 「さっきの確認は取り消したウル」 before the reply (an urgent request cancelled a pending action). */
  prefix?: string;
  /** The outbox take made while the turn thought ({@link Outbox.takeAhead}): the post need not take again. */
  ahead?: TakeAhead;
}

/**
 * One user message (SPEC §2), top to bottom: claim → context → confirmation step or brain → Guardian →
 * Gate → executor → reply → record. Each stage returns a {@link TurnDecision}; this runner composes its
 * reply once, delivers it and records it. Brain/LLM failures end in a persona error reply;
 * infrastructure failures are retried by the work queue and, on the last attempt, still answered
 * (nothing is silently lost).
 */
export class TurnRunner {
  /** Items claimed by their turn's first statement ({@link claimNamed}): what that statement read, for the turn. */
  private readonly opened = new WeakMap<
    ClaimedItem,
    { prelude: TurnPrelude; prefetch: Promise<ContextPrefetch | null>; now: Date; sentAt: number }
  >();

  constructor(private readonly d: TurnRunnerDeps) {}

  /**
   * Claims the user request a wake-up named, with the stored message it carried, in the turn's first statement
   * (the worker pool's `claimNamed`; issue 10: one round trip instead of the claim and then that statement).
   * `claim` writes the claim's CTE (`WorkQueue.claimByIdCte`); the reply key and the message are written only if
   * it took the item. The context read starts beside it, as on every first attempt. Null when the item could not
   * be claimed (taken by another worker, or waiting behind an older item): nothing was written, and the pool
   * claims as usual.
   */
  async claimNamed(msg: InboundMessage, claim: (p: SqlParams, name: string) => string): Promise<ClaimedItem | null> {
    const now = this.now();
    const prefetch = this.prefetchContext(msg, true);
    const replyKey = replyKeyOf({ dedupeKey: messageDedupeKey(msg) });
    const sentAt = this.d.outbox.clock();
    const opened = await this.d.store.claimAndOpen(
      msg,
      replyKey,
      { defaultLevel: this.d.defaultUserLevel, now, take: !this.d.shadowMode },
      claim,
    );
    if (!opened) return null;
    // Only the intake stores user requests, under this key; should one ever differ, the turn opens again under its own.
    if (replyKeyOf(opened.item) === replyKey)
      this.opened.set(opened.item, { prelude: opened.prelude, prefetch, now, sentAt });
    return opened.item;
  }

  private now(): Date {
    return this.d.now?.() ?? new Date();
  }

  async handleUserRequest(item: ClaimedItem): Promise<WorkOutcome | void> {
    const msg = item.payload as InboundMessage;
    const started = performance.now();
    const replyKey = replyKeyOf(item);
    const turnId = randomUUID();
    const log = this.d.logger.child({
      turnId,
      workItemId: String(item.id),
      platform: msg.platform,
      roomId: msg.roomId,
    });
    if (item.attempts > item.maxAttempts) {
      // Every allowed attempt died mid-turn (a crash, not an error): give up without thinking again.
      throw await this.giveUp(msg, new AppError('INTERNAL', 'turn abandoned after repeated worker crashes'), log);
    }
    try {
      const early = this.opened.get(item);
      this.opened.delete(item);
      // The first statement takes the reply's outbox row for this claim as it reserves it (not in shadow mode,
      // which posts nothing): the post needs no take of its own while that claim has the margin left.
      const take = this.d.shadowMode ? undefined : item;
      const opts = { defaultLevel: this.d.defaultUserLevel, now: early?.now ?? this.now(), take };
      const prefetch = early?.prefetch ?? this.prefetchContext(msg, item.attempts === 1);
      const sentAt = early?.sentAt ?? this.d.outbox.clock();
      const prelude = early?.prelude ?? (await this.d.store.open(msg, replyKey, opts));
      const taken = this.d.outbox.takenAt(sentAt, prelude.takenLeftMs);
      // A retry after a crash that happened after the reply went out: nothing more to do.
      if (prelude.alreadySent) return;
      const earlier = await this.earlierAnswer(msg, replyKey, prelude, log);
      if (earlier) {
        const decision: TurnDecision = {
          kind: 'delivered_earlier',
          reasonCode: 'O_RECONCILED',
          decider: 'SYSTEM',
          calls: [],
          reply: { text: earlier.text ?? '' },
        };
        return await this.finish({ msg, item, prelude, turnId, started, log, replyKey, taken }, { decision }, earlier);
      }
      const framed = await this.decide(msg, item, prelude, log, prefetch, taken);
      return await this.finish({ msg, item, prelude, turnId, started, log, replyKey, taken }, framed);
    } catch (err) {
      const app = asAppError(err, 'DB_UNAVAILABLE');
      const lastAttempt = item.attempts >= item.maxAttempts;
      log.error(
        { errorId: app.errorId, code: app.code, attempt: item.attempts, lastAttempt, err: app.message },
        'turn failed',
      );
      this.d.metrics.errors.inc({ code: app.code });
      if (err instanceof ClaimLostError) throw err;
      // Retried by the work queue; after the last attempt the item gives up, and the person is told.
      if (!lastAttempt) throw app;
      throw await this.giveUp(msg, app, log);
    }
  }

  /**
   * An earlier attempt may have posted the answer (a crash between posting and recording it, or a post that
   * timed out): it is looked for in the room before thinking, let alone posting, again.
   */
  private async earlierAnswer(
    msg: InboundMessage,
    replyKey: string,
    prelude: TurnPrelude,
    log: Logger,
  ): Promise<FoundMessage | null> {
    if (!mayHavePosted(prelude.prior)) return null;
    const found = await this.d.outbox.reconcile(replyKey, replyTo(msg, ''), prelude.prior!.createdAt);
    if (found) log.warn({ platformMessageId: found.platformMessageId }, 'earlier answer found in the room: not posted');
    return found;
  }

  /**
   * The context read of a first attempt starts beside the turn's first statement, for the member the cached
   * directory names ({@link ContextBuilder.prefetch}); the context uses it only if the actor that statement
   * reads is that member. Retries (which may find their reply already sent) and a service without a model
   * (which reads no context) do not start one. Never rejects.
   */
  private prefetchContext(msg: InboundMessage, firstAttempt: boolean): Promise<ContextPrefetch | null> {
    if (!firstAttempt || !this.d.llmConfigured) return Promise.resolve(null);
    return this.d.contextBuilder.prefetch(msg).catch(() => null);
  }

  /** Everything between "message stored" and "reply ready": the turn's decision, its reply composed. */
  private async decide(
    msg: InboundMessage,
    item: ClaimedItem,
    prelude: TurnPrelude,
    log: Logger,
    prefetch: Promise<ContextPrefetch | null>,
    taken: TakeAhead | undefined,
  ): Promise<Framed> {
    const lang = detectLanguage(msg.answerText ?? msg.text);
    // Persona texts alone (no model, no stored data): said as they are.
    const early = this.withoutThinking(msg, prelude, lang);
    if (early) return { decision: early };
    const { actor } = prelude;
    const key: SessionKey = { platform: msg.platform, roomId: msg.roomId, accountId: msg.senderAccountId };
    const session = await this.session(key, prelude, lang, log);
    if ('kind' in session) return { decision: session };

    const ctx = await this.context(msg, actor, prelude, await prefetch);
    // The reply's outbox row, unless the first statement took it, is taken while the turn thinks (or runs the
    // action a 「はい」 approved), so the post does not wait for that round trip; not in shadow mode, which posts
    // nothing.
    const ahead = this.d.shadowMode ? undefined : (taken ?? this.d.outbox.takeAhead(replyKeyOf(item), item));
    const step = await this.d.confirmations.answer({ msg, session, ctx, item, actor });
    if (step.kind === 'decided') {
      const reported = await this.d.replies.honest(step.decision, ctx);
      return { decision: this.d.replies.compose(reported, ctx.language), ahead };
    }
    if (step.modifying) ctx.sections.push(this.changeRequest(step.modifying));

    const thought = await this.d.proposals.think({ ctx, actor, item, modifying: step.modifying });
    const decision = await this.d.replies.honest(thought, ctx);
    const composed = this.d.replies.compose(decision, ctx.language);
    const asked = decision.kind === 'confirm' ? await this.d.confirmations.open(composed, ctx.language) : composed;
    const budgeted = await this.clarificationBudget(key, session, asked, ctx.language);
    await this.trackErrors(key, session, budgeted);
    return { decision: budgeted, prefix: step.prefix, ahead };
  }

  /**
   * Turns answered without the model: a sender over a per-sender budget (the polite reply once per
   * window, then silence); a stranger — not in the directory, in a DM or an unlisted room — told that the
   * bot serves members (issue 8); and no model configured (a setup hint).
   */
  private withoutThinking(msg: InboundMessage, prelude: TurnPrelude, lang: Language): TurnDecision | null {
    const say = (key: Parameters<typeof personaMessage>[1]) => ({ text: personaMessage(this.d.prompts, key, lang) });
    const { budget, actor } = prelude;
    if (!budget.ok) {
      this.d.metrics.senderBudgetRefusals.inc({ limit: budget.limit });
      const key = budget.limit === 'minute' ? 'reply.sender_budget_minute' : 'reply.sender_budget_day';
      return {
        kind: 'refused',
        reasonCode: budget.reasonCode,
        decider: 'SYSTEM',
        calls: [],
        reply: say(key),
        silent: !budget.notify,
        notes: { notified: budget.notify },
      };
    }
    if (actor.source === 'stranger') {
      this.d.metrics.strangerTurns.inc({ platform: msg.platform });
      return {
        kind: 'refused',
        reasonCode: 'Z_STRANGER',
        decider: 'SYSTEM',
        calls: [],
        reply: say('reply.stranger'),
        auth: { result: 'DENIED', reasonCode: 'Z_STRANGER' },
      };
    }
    if (this.d.llmConfigured) return null;
    return {
      kind: 'error',
      reasonCode: 'LLM_NOT_CONFIGURED',
      decider: 'SYSTEM',
      calls: [],
      error: { category: 'SYSTEM' },
      reply: say('error.LLM_NOT_CONFIGURED'),
    };
  }

  /**
   * The session (pending confirmations): a plainly NORMAL one came with the prelude; pending or expired
   * ones need the state manager. It is the one context source whose failure stops the turn (R-X2):
   * without it an answer could be misread.
   */
  private async session(
    key: SessionKey,
    prelude: TurnPrelude,
    lang: Language,
    log: Logger,
  ): Promise<SessionView | TurnDecision> {
    try {
      return prelude.quickSession ?? (await this.d.states.getSession(key));
    } catch (err) {
      const app = asAppError(err, 'SESSION_STATE_UNAVAILABLE');
      log.error({ errorId: app.errorId, err: app.message }, 'session state unavailable; nothing executed');
      const text = personaMessage(this.d.prompts, 'error.SESSION_STATE_UNAVAILABLE', lang, { errorId: app.errorId });
      return {
        kind: 'error',
        reasonCode: 'SESSION_STATE_UNAVAILABLE',
        decider: 'SYSTEM',
        calls: [],
        reply: { text },
        error: { errorId: app.errorId, category: 'SYSTEM' },
      };
    }
  }

  private context(
    msg: InboundMessage,
    actor: Actor,
    prelude: TurnPrelude,
    prefetched: ContextPrefetch | null,
  ): Promise<TurnContext> {
    return turnContext(this.d.contextBuilder, { msg, actor, profile: prelude.profile, now: this.now(), prefetched });
  }

  /** The pending action the person asked to change, as context for the brain's new proposal. */
  private changeRequest(m: PendingActionView): TurnContext['sections'][number] {
    return {
      title: '保留中の操作（この人が変更を求めています）',
      lines: [
        `${String(m.proposal.summary ?? m.proposal.toolName)}`,
        `tool: ${m.proposal.toolName} / parameters: ${JSON.stringify(m.proposal.parameters)}`,
        personaMessage(this.d.prompts, 'confirm.modify_hint', 'en'),
      ],
    };
  }

  /** R-S5: after 3 clarification rounds suggest starting over; after 4 end the flow. */
  private async clarificationBudget(
    key: SessionKey,
    session: SessionView,
    decision: TurnDecision,
    lang: Language,
  ): Promise<TurnDecision> {
    const states = this.d.states;
    if (decision.kind !== 'clarify') {
      if (session.clarificationRounds > 0) await states.resetClarification(key);
      return decision;
    }
    const rounds = await states.bumpClarification(key);
    const next = clarificationStep(rounds);
    if (next === 'end_flow') {
      await states.resetClarification(key);
      const text = personaMessage(this.d.prompts, 'clarify.ended', lang);
      return {
        ...decision,
        kind: 'ended',
        reasonCode: 'S_CLARIFICATION_LOOP_ENDED',
        decider: 'SYSTEM',
        reply: { text },
      };
    }
    if (next === 'continue') return decision;
    const text = `${decision.reply.text}\n${personaMessage(this.d.prompts, 'clarify.restart', lang)}`;
    return {
      ...decision,
      reply: { ...decision.reply, text },
      notes: { ...decision.notes, clarificationRounds: rounds },
    };
  }

  /** Consecutive errors move the session to ERROR_RECOVERY (state manager); a good turn clears them. */
  private async trackErrors(key: SessionKey, session: SessionView, decision: TurnDecision): Promise<void> {
    if (decision.kind === 'error') await this.d.states.recordError(key, decision.reasonCode);
    else if (session.errorCount > 0 || session.mode === 'ERROR_RECOVERY') await this.d.states.recordSuccess(key);
  }

  /** Reply → record: posts the reply (unless silent or in shadow mode), then writes the turn in one statement. */
  private async finish(
    t: {
      msg: InboundMessage;
      item: ClaimedItem;
      prelude: TurnPrelude;
      turnId: string;
      started: number;
      log: Logger;
      replyKey: string;
      /** The take of the turn's first statement, if it took the reply's row. */
      taken?: TakeAhead;
    },
    framed: Framed,
    delivered?: FoundMessage,
  ): Promise<WorkOutcome> {
    const { msg, item, decision } = { ...t, decision: framed.decision };
    const text = framed.prefix ? `${framed.prefix}\n${decision.reply.text}` : decision.reply.text;
    let sent: { platformMessageId?: string } | null = null;
    let posted: Delivered | null = null;
    if (!this.d.shadowMode && !decision.silent) {
      // Posted here and marked sent by the turn's last statement (until then a retry looks for it in the room
      // before posting again), or found posted by an earlier attempt (already marked).
      const reply = { ...replyTo(msg, text), title: decision.reply.title, options: decision.reply.options };
      if (delivered) sent = delivered;
      else {
        const ahead = framed.ahead ?? t.taken;
        const res = await this.d.outbox.deliver(t.replyKey, reply, item, { markLater: true, ahead });
        sent = res;
        posted = deliveryRecord(t.replyKey, text, res, res.postedAt);
      }
    }
    const turn = this.d.recorder.prepare(
      turnAudit(decision, {
        id: t.turnId,
        orgId: msg.orgId,
        platform: msg.platform,
        roomId: msg.roomId,
        accountId: msg.senderAccountId,
        memberId: t.prelude.actor.memberId,
        workItemId: item.id,
        input: msg.text,
        finalReply: text,
        totalMs: performance.now() - t.started,
        shadow: this.d.shadowMode,
      }),
    );
    const history = decision.silent ? null : { text, options: decision.reply.options, at: this.now() };
    const summarize = decision.brain?.model !== undefined && decision.brain.model !== null;
    const critique = this.critique(t.turnId, msg, decision);
    const enqueue = critique ? [critique] : [];
    const outcome = await this.d.store.close({ msg, sent, history, turn, item, posted, summarize, enqueue });
    if (outcome.summaryEnqueued) this.d.onSummaryEnqueued?.();
    if (outcome.enqueued > 0) this.d.critic?.enqueued();
    turn.observe();
    const ms = Math.round(performance.now() - t.started);
    t.log.info({ decision: DECISION_LABELS[decision.kind], reasonCode: decision.reasonCode, ms }, 'turn done');
    return { completed: outcome.completed };
  }

  /**
   * The self-critique sampling looks at the decision after it was made (R-B6); a sampled turn's critique item
   * is stored with the turn record and runs later as background work, so it can neither delay nor change the
   * reply.
   */
  private critique(turnId: string, msg: InboundMessage, decision: TurnDecision) {
    if (!this.d.critic) return null;
    const overall = decision.brain?.confidence?.overall;
    return this.d.critic.sample({
      id: turnId,
      orgId: msg.orgId,
      model: decision.brain?.model ?? null,
      confidence: typeof overall === 'number' ? overall : null,
      tools: (decision.proposals ?? []).map((p) => p.tool),
    });
  }

  /**
   * The turn gives up (its last attempt failed, or every attempt crashed): records the error turn and returns the
   * error to end the item with — never retried, so the work queue marks it failed with this error id, enqueues the
   * person's apology (`src/pipeline/apology.ts`: it looks at what reached the room first, so nothing is said twice)
   * and the service raises the `work_abandoned` alert (SPEC §5: never silent).
   */
  private async giveUp(msg: InboundMessage, app: AppError, log: Logger): Promise<AppError> {
    log.error({ errorId: app.errorId, code: app.code }, 'turn gave up: the person is told, the item ends failed');
    const lang = detectLanguage(msg.answerText ?? msg.text);
    const text = personaMessage(this.d.prompts, `error.${app.code}`, lang, { errorId: app.errorId });
    const decision: TurnDecision = {
      kind: 'error',
      reasonCode: app.code,
      decider: 'SYSTEM',
      calls: [],
      reply: { text },
      error: { errorId: app.errorId, category: app.category },
    };
    const facts = {
      id: randomUUID(),
      orgId: msg.orgId,
      platform: msg.platform,
      roomId: msg.roomId,
      accountId: msg.senderAccountId,
      memberId: null,
      workItemId: null,
      input: msg.text,
      finalReply: text,
      totalMs: 0,
      shadow: false,
    };
    await this.d.recorder.record(turnAudit(decision, facts)).catch(() => undefined);
    return givingUp(app);
  }
}

/** The answer to `msg`: threaded to it, mentioning the asker. */
export function replyTo(msg: InboundMessage, text: string): OutboundReply {
  return {
    platform: msg.platform,
    roomId: msg.roomId,
    text,
    kind: 'reply',
    inReplyTo: {
      platformMessageId: msg.platformMessageId,
      accountId: msg.senderAccountId,
      accountName: msg.senderName,
    },
  };
}

/**
 * A turn's context for the brain: the sender as the brain sees them, the room, the audience the actor's room and
 * level give. The one place it is put together, for the service and the evaluation set (`eval/`).
 */
export function turnContext(
  builder: Pick<ContextBuilder, 'build'>,
  t: {
    msg: InboundMessage;
    actor: Actor;
    profile: TurnPrelude['profile'];
    now: Date;
    prefetched?: ContextPrefetch | null;
  },
): Promise<TurnContext> {
  const { msg, actor } = t;
  const sender = senderProfile(msg, actor, t.profile);
  const room = { platform: msg.platform, roomId: msg.roomId, name: null, authority: actor.roomAuthority };
  return builder.build({ msg, sender, room, audience: audienceOf(actor), now: t.now, prefetched: t.prefetched });
}

/** The sender as the brain sees them: directory facts for members, the platform's name otherwise. */
export function senderProfile(msg: InboundMessage, actor: Actor, details: TurnPrelude['profile']): SenderProfile {
  const known = actor.memberId ? details : null;
  return {
    known: actor.known,
    memberId: actor.memberId,
    name: actor.name ?? msg.senderName ?? `user ${msg.senderAccountId}`,
    level: actor.level,
    departmentId: actor.departmentId,
    departmentName: known?.departmentName ?? null,
    title: known?.title ?? null,
    preferences: known?.preferences ?? {},
  };
}
