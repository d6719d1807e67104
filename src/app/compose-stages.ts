/**
 * The stages the workers run, composed: the turn (context, brain, Guardian, Gate, executor, confirmations, reply,
 * outbox, record), the notices, background work, summaries and self-critique, and the brain; for the composition
 * root (`create-hisho.ts`) and the tests that run turns without a service (`tests/helpers/pipeline.ts`). It loads
 * no HTTP server, adapters or admin pages.
 */
import type { Env } from '../config/env';
import { Brain } from '../brain/brain';
import { CacheLifetime } from '../brain/cache-lifetime';
import { CostGuard } from '../brain/cost-guard';
import { SenderBudget } from '../turn/sender-budget';
import { AnthropicLlmClient } from '../brain/anthropic-client';
import type { LlmClient } from '../brain/llm-client';
import { tracedLlmClient } from '../brain/traced-llm-client';
import { inSpan, tracingOn } from '../observability/tracing';
import { HISHO } from '../observability/genai';
import type { ChatworkTasksApi } from '../tools/types';
import { type PromptSet } from '../brain/prompts';
import { ContextBuilder, type OrgInfo } from '../context/context-builder';
import { TURN_CONTEXT_SOURCES } from '../context/sources';
import { type Db } from '../db/prisma';
import { type Sql } from '../db/sql';
import { asAppError } from '../core/app-error';
import { defaultGuardianConfig, type GuardianConfig } from '../guardian';
import { DirectoryCache } from '../authorization/directory-cache';
import { OrgCache } from '../org/org-cache';
import { type WorkHandler, type WorkerPoolOptions } from '../queue/worker-pool';
import { APOLOGY_KIND, ClaimLostError, type ClaimedItem, type WorkType } from '../queue/work-queue';
import { type Logger } from '../observability/logger';
import { type Metrics } from '../observability/metrics';
import { safeRedactText } from '../observability/redact';
import { TurnRecorder } from '../turn/turn-recorder';
import { Outbox } from '../queue/outbox';
import { ConfirmationFlow } from '../turn/confirmation-flow';
import { ToolContexts } from '../turn/tool-services';
import { ReplyComposer } from '../turn/reply';
import { ConversationLog } from '../context/conversation-log';
import { TurnStore } from '../turn/turn-store';
import { ProposalStage } from '../turn/proposal-stage';
import { Sessions } from '../confirmations/sessions';
import { PendingActions } from '../confirmations/pending-actions';
import { TurnRunner } from '../turn/turn';
import { ToolExecutor } from '../tools/executor';
import { ToolRegistry, type ToolSource } from '../tools/registry';
import { handlers } from '../../handlers';
import { NoticeDelivery } from '../notices/notice-delivery';
import { Apologies } from '../notices/apology';
import { ScheduledNoticeHandler } from '../notices/scheduled-notice';
import { ReminderNotices } from '../notices/reminder-notice';
import { TASK_DUE_CHANGED_KIND, TaskChangeNotices } from '../notices/task-change-notice';
import { AdminAlertNotices, AdminAlerts } from '../notices/admin-alerts';
import type { InboundMessage } from '../core/chat';
import { SelfCritic } from '../turn/self-critique';
import { Reviewer } from '../brain/critique';
import { Summarizer } from '../brain/summarize';
import { isSummaryItem, SummaryRunner } from '../work/summary-runner';
import { ConversationSummaries } from '../context/conversation-summaries';
import type { RoomMember } from '../context/types';
import { WorkRunner } from '../work/work-runner';
import { WorkReporter } from '../work/work-report';
import { BACKGROUND_WORK_KIND, WorkStore } from '../work/work-store';

/** What the stages are composed from: configuration, the database, and what lies outside the machine. */
export interface StagesInput {
  config: Readonly<Env>;
  db: Db;
  sql: Sql;
  logger: Logger;
  metrics: Metrics;
  prompts: PromptSet;
  /** The brain (tests give a scripted one). */
  brain: Pick<Brain, 'decide'>;
  llmConfigured: boolean;
  /** The outbox with the platforms' senders registered. */
  outbox: Outbox;
  chatwork: () => ChatworkTasksApi | null;
  botNames: () => readonly string[];
  /** Self-critique of sampled turns (R-B6); off when absent. */
  critique?: CritiqueInput;
  /** Conversation summaries in the background (R-X4); off when absent or SUMMARY_EVERY_MESSAGES=0. */
  summaries?: SummariesInput;
  /** Members of the message's room on its platform (ChatWork), for the persons context; none when absent. */
  roomMembers?: (msg: InboundMessage) => Promise<readonly RoomMember[]>;
  /** The organisation directory cached per organisation (invalidated on import); read per turn when absent. */
  directories?: DirectoryCache;
  /** Whether an organisation has knowledge documents, cached (invalidated on import); searched when absent. */
  knowledgePresence?: OrgCache<boolean>;
  /** The organisation and its policies, cached (invalidated on import); read by the context builders when absent. */
  orgInfo?: OrgCache<OrgInfo | null>;
  now?: () => Date;
  /** Tools beside the handlers' (the approved MCP tools, issue 42), read on every lookup. */
  toolSources?: readonly ToolSource[];
}

/** What conversation summaries need from outside the stages. */
export interface SummariesInput {
  summarizer: Pick<Summarizer, 'summarize'>;
  onEnqueued: () => void;
}

/** What self-critique needs from outside the pipeline. */
export interface CritiqueInput {
  reviewer: Pick<Reviewer, 'review'>;
  /** A critique that disagrees (an admin alert). */
  onConcern: (turnId: string, risk: string) => void;
  onEnqueued: () => void;
}

/** The composed stages, one object each (what the worker pool and the adapters are given). */
export interface Stages {
  runner: TurnRunner;
  /** `notification` items, by kind. */
  notices: { handle(item: ClaimedItem): Promise<void> };
  proposals: ProposalStage;
  confirmations: ConfirmationFlow;
  /** The tools (capabilities), as the turns use them. */
  registry: ToolRegistry;
  states: Sessions;
  /** The sessions' pending actions (their one writer). */
  pending: PendingActions;
  contextBuilder: ContextBuilder;
  recorder: TurnRecorder;
  conversations: ConversationLog;
  /** The `work` item handler of self-critique (null when it is off). */
  critic: SelfCritic | null;
  /** The `work` item handler of conversation summaries (null when they are off). */
  summaries: SummaryRunner | null;
  /** The `work` item handler of background work (R-W1). */
  work: WorkRunner;
}

/**
 * Composes the stages: context → confirmation step or brain → Guardian → Gate → executor → reply →
 * record (→ self-critique sampling, when given), and the notice kinds (reminders, scheduled notices, admin
 * alerts), each stage with its explicit dependencies (the service, and the orchestrator tests, use this).
 */
export function composeStages(p: StagesInput): Stages {
  const { config, db, sql, logger, metrics, prompts, brain, outbox, now } = p;
  const directory = p.directories ? (orgId: string) => p.directories!.get(orgId) : undefined;
  const guardianConfig: GuardianConfig = {
    ...defaultGuardianConfig(),
    approvalMode: config.APPROVAL_MODE,
    autoApprove: [...config.AUTO_APPROVE_TOOLS],
    shadowRules: [...config.GUARDIAN_SHADOW_RULES],
  };
  const orgInfo = p.orgInfo ? (orgId: string) => p.orgInfo!.get(orgId) : undefined;
  const contextBuilder = new ContextBuilder({
    db,
    logger,
    defaultTimezone: config.BOT_TIMEZONE,
    sources: TURN_CONTEXT_SOURCES,
    sql,
    roomMembers: p.roomMembers,
    departments: p.directories ? async (orgId) => (await p.directories!.get(orgId)).departments : undefined,
    directory,
    hasKnowledge: p.knowledgePresence ? (orgId) => p.knowledgePresence!.get(orgId) : undefined,
    orgInfo,
  });
  const recorder = new TurnRecorder(db, metrics, sql);
  const conversations = new ConversationLog(db, sql);
  const registry = new ToolRegistry(handlers);
  for (const source of p.toolSources ?? []) registry.addSource(source);
  const scheduleLimits = { perMember: config.SCHEDULES_PER_MEMBER, perRoom: config.SCHEDULES_PER_ROOM };
  const contexts = new ToolContexts({
    db,
    outbox,
    conversations,
    chatwork: p.chatwork,
    now,
    directory,
    scheduleLimits,
  });
  const pending = new PendingActions(db, { now, sql });
  const states = new Sessions(db, { now, pending });
  const executor = new ToolExecutor(registry);
  const shadowMode = config.SHADOW_MODE;
  const proposals = new ProposalStage({
    db,
    brain,
    registry,
    executor,
    contexts,
    prompts,
    guardianConfig,
    stepBudget: config.STEP_BUDGET,
    shadowMode,
    logger,
    metrics,
    directory,
  });
  const confirmations = new ConfirmationFlow({
    db,
    pending,
    brain,
    registry,
    executor,
    contexts,
    stage: proposals,
    prompts,
    logger,
    botNames: p.botNames,
    defaultUserLevel: config.DEFAULT_USER_LEVEL,
    shadowMode,
    directory,
  });
  const senderBudget = new SenderBudget({
    timezone: config.BOT_TIMEZONE,
    limits: {
      turnsPerMinute: config.SENDER_TURNS_PER_MINUTE,
      turnsPerDay: config.SENDER_TURNS_PER_DAY,
      dailyCostUsd: config.SENDER_DAILY_COST_LIMIT_USD,
    },
  });
  const critic = p.critique
    ? new SelfCritic({
        db,
        sql,
        reviewer: p.critique.reviewer,
        recorder,
        logger,
        metrics,
        rate: config.SELF_CRITIQUE_RATE,
        riskOf: (tool) => registry.meta(tool)?.risk,
        onConcern: p.critique.onConcern,
        onEnqueued: p.critique.onEnqueued,
      })
    : null;
  const conversationSummaries =
    p.summaries && config.SUMMARY_EVERY_MESSAGES > 0
      ? new ConversationSummaries(
          db,
          { every: config.SUMMARY_EVERY_MESSAGES, maxAttempts: config.WORK_MAX_ATTEMPTS },
          sql,
        )
      : null;
  const summaries =
    p.summaries && conversationSummaries
      ? new SummaryRunner({
          summaries: conversationSummaries,
          summarizer: p.summaries.summarizer,
          recorder,
          logger,
          timezone: config.BOT_TIMEZONE,
          every: config.SUMMARY_EVERY_MESSAGES,
        })
      : null;
  const replies = new ReplyComposer({ prompts, guardianConfig, brain, tools: registry, metrics, logger });
  const runner = new TurnRunner({
    store: new TurnStore(sql, { budget: senderBudget, summaries: conversationSummaries ?? undefined }),
    contextBuilder,
    states,
    confirmations,
    proposals,
    replies,
    outbox,
    recorder,
    prompts,
    logger,
    metrics,
    defaultUserLevel: config.DEFAULT_USER_LEVEL,
    shadowMode,
    llmConfigured: p.llmConfigured,
    critic: critic ?? undefined,
    onSummaryEnqueued: p.summaries?.onEnqueued,
    now,
  });

  // Proactive notices: facts are given explicitly and scoped to the reader, so their builder has no sources.
  const noticeContext = new ContextBuilder({
    db,
    logger,
    defaultTimezone: config.BOT_TIMEZONE,
    sources: [],
    sql,
    orgInfo,
  });
  const delivery = new NoticeDelivery({
    brain,
    contextBuilder: noticeContext,
    outbox,
    conversations,
    recorder,
    guardianConfig,
    logger,
    metrics,
    llmConfigured: p.llmConfigured,
    shadowMode,
    now,
  });
  // Background work (R-W1/R-W2): steps through the same proposal stage and confirmations; one report at the end.
  const workStore = new WorkStore(db);
  const work = new WorkRunner({
    db,
    store: workStore,
    proposals,
    confirmations,
    replies,
    contextBuilder,
    outbox,
    recorder,
    prompts,
    logger,
    defaultUserLevel: config.DEFAULT_USER_LEVEL,
    limits: {
      maxSteps: config.WORK_MAX_STEPS,
      maxCostUsd: config.WORK_MAX_COST_USD,
      maxMinutes: config.WORK_MAX_MINUTES,
      confirmPollMs: config.WORK_CONFIRM_POLL_SECONDS * 1000,
    },
    now,
  });
  const reporter = new WorkReporter({ db, store: workStore, delivery, prompts });
  const scheduled = new ScheduledNoticeHandler({ db, delivery, prompts, logger, metrics, now });
  const alertNotices = new AdminAlertNotices({
    db,
    prompts,
    delivery,
    windowMs: config.ALERT_WINDOW_MINUTES * 60_000,
    timezone: config.BOT_TIMEZONE,
  });
  const apologies = new Apologies({ db, outbox, prompts, recorder, logger, shadowMode });
  const reminders = new ReminderNotices({ db, delivery, prompts, shadowMode });
  const taskChanges = new TaskChangeNotices({ db, delivery, prompts, now });
  const notices = noticesByKind(
    {
      reminder: (item) => reminders.handle(item),
      [TASK_DUE_CHANGED_KIND]: (item) => taskChanges.handle(item),
      schedule: (item) => scheduled.handle(item),
      admin_alert: (item) => alertNotices.handle(item),
      work_report: (item) => reporter.handle(item),
      [APOLOGY_KIND]: (item) => apologies.handle(item),
    },
    logger,
  );
  return {
    runner,
    notices,
    proposals,
    confirmations,
    registry,
    states,
    pending,
    contextBuilder,
    recorder,
    conversations,
    critic,
    summaries,
    work,
  };
}

/** Runs a `notification` item by its payload's kind; an unknown kind is logged and ignored. */
function noticesByKind(kinds: Record<string, (item: ClaimedItem) => Promise<void>>, logger: Logger): Stages['notices'] {
  return {
    handle: async (item) => {
      const kind = (item.payload as { kind?: string }).kind;
      const run = kind !== undefined && Object.hasOwn(kinds, kind) ? kinds[kind] : undefined;
      if (run) return run(item);
      logger.warn({ workItemId: String(item.id) }, 'unknown notification kind: ignored');
    },
  };
}

/**
 * The worker pool's handlers by work item type, for the kinds this process claims (its role's): the pool claims
 * only the kinds it has a handler for.
 */
export function workItemHandlers(
  p: {
    runner: TurnRunner;
    notices: Stages['notices'];
    critic: SelfCritic | null;
    summaries: SummaryRunner | null;
    work: WorkRunner;
  },
  kinds: readonly WorkType[] = ['user_request', 'notification', 'work'],
): WorkerPoolOptions['handlers'] {
  const all: Record<WorkType, WorkHandler> = {
    user_request: (item) => p.runner.handleUserRequest(item),
    notification: (item) => p.notices.handle(item),
    // `work` items by kind: background work, conversation summaries, else self-critique (which ignores others);
    // each in a span of its own, so its model calls are one trace (joined to the span that stored it, if any).
    work: (item: ClaimedItem) => {
      const kind =
        (item.payload as { kind?: string }).kind === BACKGROUND_WORK_KIND
          ? BACKGROUND_WORK_KIND
          : isSummaryItem(item.payload)
            ? 'conversation_summary'
            : 'self_critique';
      const attributes = {
        [HISHO.workKind]: kind,
        [HISHO.workItemId]: String(item.id),
        [HISHO.attempt]: item.attempts,
      };
      return inSpan(`work ${kind}`, { kind: 'consumer', parent: item.traceContext, attributes }, () => {
        if (kind === BACKGROUND_WORK_KIND) return p.work.handle(item);
        if (kind === 'conversation_summary') return p.summaries?.handle(item) ?? Promise.resolve();
        return p.critic?.handle(item) ?? Promise.resolve();
      });
    },
  };
  return Object.fromEntries(kinds.map((k) => [k, all[k]]));
}

/**
 * What a failed work item records: the error's id, code and redacted message (`[E-…] CODE: message`, read back by
 * `failureOf` when the item gives up), and whether to try again.
 */
export function describeWorkError(err: unknown): { text: string; retryable: boolean } {
  const app = asAppError(err);
  const retryable = err instanceof ClaimLostError ? err.retryable : app.retryable;
  const text = `[${app.errorId}] ${safeRedactText(`${app.code}: ${app.message}`) ?? app.code}`;
  return { text, retryable };
}

/** The model client (null without a key), the cost guard and the brain. */
export function composeBrain(
  config: Readonly<Env>,
  d: {
    db: Db;
    logger: Logger;
    prompts: PromptSet;
    raise: (a: Parameters<AdminAlerts['raise']>[0]) => void;
    now?: () => Date;
    llm?: LlmClient;
    /** Wraps the model client (the setup status watches its answers for failures an operator must fix). */
    watch?: (llm: LlmClient, checker: LlmClient) => LlmClient;
  },
): { llm: LlmClient | null; costGuard: CostGuard; brain: Brain } {
  const { db, logger, prompts, raise } = d;
  const o = { llm: d.llm, now: d.now };
  const client =
    o.llm ??
    (config.ANTHROPIC_API_KEY
      ? new AnthropicLlmClient({
          apiKey: config.ANTHROPIC_API_KEY,
          baseURL: config.ANTHROPIC_BASE_URL,
          timeoutMs: config.LLM_TIMEOUT_MS,
          maxRetries: config.LLM_MAX_RETRIES,
        })
      : null);
  // A `chat` span per model call, only when tracing is on (issue 43); the setup status watches the answers.
  const traced = client && tracingOn() ? tracedLlmClient(client) : client;
  const llm = traced && d.watch ? d.watch(traced, client!) : traced;
  const costGuard = new CostGuard({
    db,
    logger,
    model: config.ANTHROPIC_MODEL,
    smallModel: config.LLM_SMALL_MODEL,
    routing: config.LLM_ROUTING,
    cacheLifetime: new CacheLifetime({ db, mode: config.LLM_CACHE_TTL, model: config.ANTHROPIC_MODEL, now: o.now }),
    fallbackModel: config.ANTHROPIC_FALLBACK_MODEL,
    dailyLimitUsd: config.LLM_DAILY_COST_LIMIT_USD,
    action: config.LLM_COST_LIMIT_ACTION,
    timezone: config.BOT_TIMEZONE,
    now: o.now,
    onLimitReached: (spentUsd, limitUsd, action) =>
      raise({
        kind: 'llm_cost_limit',
        severity: 'critical',
        facts: { spentUsd: spentUsd.toFixed(2), limitUsd, action },
      }),
  });
  const unconfigured: LlmClient = {
    create: async () => {
      throw new Error('LLM not configured');
    },
  };
  const brain = new Brain({ llm: llm ?? unconfigured, prompts, models: costGuard, maxTokens: config.LLM_MAX_TOKENS });
  return { llm, costGuard, brain };
}
