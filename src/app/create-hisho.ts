import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import type { Router } from 'express';
import type { Pool } from 'pg';
import {
  type ChatworkClient,
  chatworkClientFrom,
  ChatworkSender,
  chatworkWebhookRouter,
  createChatworkWebhookHandler,
} from '../adapters/chatwork';
import { ChatworkBotIdentity } from '../adapters/chatwork/bot-identity';
import { ConsoleSender } from '../adapters/console/console-sender';
import { createConsoleRouter } from '../adapters/console/console.route';
import { AdapterSupervisor } from '../adapters/supervisor';
import type { ChatSender, InboundMessage, Platform } from '../core/chat';
import { Reviewer } from '../brain/critique';
import type { LlmClient } from '../brain/llm-client';
import { PersonaFileError } from '../brain/persona-file';
import { loadPrompts, PROMPTS_DIR, type PromptSet } from '../brain/prompts';
import { Summarizer } from '../brain/summarize';
import { environment, type Env } from '../config/env';
import { RoomMembersCache } from '../context/room-members';
import type { RoomMember } from '../context/types';
import { personaMessage, personaNames } from '../core/messages';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../db/embedded-postgres';
import { runningOnEmbedded } from '../db/embedded-postgres-root';
import { applyMigrations } from '../db/migrate';
import { createDatabase, withSharedLock, type Db } from '../db/prisma';
import { sqlRunner, type Sql } from '../db/sql';
import { statementCounterFromEnv, type StatementCounter } from '../db/statement-counter';
import { Intake } from '../adapters/intake';
import { WorkerPool } from '../queue/worker-pool';
import { WorkNotices } from '../queue/work-notices';
import { WorkQueue } from '../queue/work-queue';
import { AlertMonitor } from '../notices/alert-monitor';
import { AdminAlerts, gaveUpAlert } from '../notices/admin-alerts';
import { createLogger, type Logger } from '../observability/logger';
import { createMetrics, type Metrics } from '../observability/metrics';
import { PLATFORMS } from '../org/directory.schema';
import { DirectoryImportError, formatImportSummary, importDirectoryFile } from '../org/import-directory';
import { McpApprovals } from '../mcp/mcp-approvals';
import type { McpServerSection } from '../org/directory.schema';
import { serverSpec } from '../mcp/mcp-config';
import { McpTools } from '../mcp/mcp-tools';
import { startOrgCaches, type OrgCaches } from './org-caches';
import { Outbox, postingMarginMs } from '../queue/outbox';
import { createEditForms } from '../confirmations/edit-form';
import { createButtonAnswers } from '../confirmations/button-answers';
import { QuestionCloser } from '../confirmations/question-closer';
import { scheduleMaintenance } from './maintenance';
import { NoticeScheduler } from '../scheduler/notices/notice-scheduler';
import { fireDueChatSchedules } from '../scheduler/chat-schedules';
import { startReminderSweep } from '../scheduler/reminders';
import { AdminAuth } from '../server/admin-auth';
import { createAdminRouter } from '../server/admin/admin.route';
import { createApp } from '../server/app';
import {
  composeBrain,
  composeStages,
  describeWorkError,
  workItemHandlers,
  type CritiqueInput,
  type Stages,
} from './compose-stages';
import { dutiesOf, type RoleDuties } from './roles';
import { useProxies } from '../core/outbound-http';
import { EmbeddedInUse } from '../db/postmaster-lock';
import { SetupStatus } from './setup-status';
import {
  checkDatabase,
  checkPortFree,
  directoryFailure,
  embeddedInUseFailure,
  listenFailure,
  StartupError,
  terminalLanguage,
} from './startup-checks';

/** Answers a confirmation-button click (Discord, the console). */
type ButtonAnswer = ReturnType<typeof createButtonAnswers>;

export const SAMPLE_DIRECTORY = path.resolve(__dirname, '..', '..', 'config', 'org.sample.yaml');

/** Test and benchmark seams: everything outside the machine can be replaced. */
export interface ServiceOverrides {
  llm?: LlmClient;
  logger?: Logger;
  now?: () => Date;
  /** Skip GET /me at start (tests pass the bot account id directly). */
  chatworkBotAccountId?: string;
  /** First retry delay of GET /me after a failure at start (default 2 s, doubling up to 60 s). */
  chatworkMeRetryMs?: number;
  /** Wait before looking for a message whose post timed out (default 2 s). */
  outboxReconcileDelayMs?: number;
  /** A discord.js client to use instead of a new one (tests drive it by emitting gateway events). */
  discordClient?: import('discord.js').Client;
  /** First retry delay of an adapter that could not connect (default 5 s, doubling up to 5 min). */
  adapterRetryMs?: number;
  /** How long an adapter may be down before the `adapter_down` alert (default ADAPTER_DOWN_ALERT_MINUTES). */
  adapterDownAlertMs?: number;
  workerPollMs?: number;
  /**
   * How often decided confirmations' questions are looked for and closed (default 1 s; `workerPollMs` when
   * only that is given, so tests that silence idle loops silence this one too).
   */
  questionCloseMs?: number;
  instanceId?: string;
  /** How often due reminders are turned into notifications (default 15 s). */
  reminderSweepMs?: number;
  /** Run the notice scheduler (default: NOTICES_ENABLED, off under NODE_ENV=test unless set here). */
  noticeScheduler?: boolean;
  /** How often schedules are re-read (default SCHEDULE_RELOAD_SECONDS). */
  scheduleReloadMs?: number;
  /** Check alert thresholds periodically (default: on, off under NODE_ENV=test unless set here). */
  alertMonitor?: boolean;
  /** Check the model with one cheap request at start (default: on, off under NODE_ENV=test unless set here). */
  llmCheck?: boolean;
  /** How long an MCP server that is down waits before the next attempt (default 30 s). */
  mcpRetryMs?: number;
}

export interface Service {
  config: Readonly<Env>;
  db: Db;
  logger: Logger;
  metrics: Metrics;
  queue: WorkQueue;
  /** The claim loops over the work queue in this process (claiming nothing in the `intake` role). */
  pool: WorkerPool;
  intake: Intake;
  server: Server;
  port: number;
  databaseUrl: string;
  startupMs: number;
  /** The notice scheduler, when it runs. */
  scheduler: NoticeScheduler | null;
  alerts: AdminAlerts;
  /** SQL statements by shape since start, when HISHO_COUNT_SQL=1 (else null). */
  sqlStatements: StatementCounter | null;
  /** Threshold checks (started unless off, in a role that runs background duties; `check()` runs one). */
  monitor: AlertMonitor;
  /** The platform adapters that are on, and whether each is connected (/readyz, /metrics). */
  adapters: AdapterSupervisor;
  /** What is set up and what is not (/admin's setup section; `aiChecked` settles after the start-up check). */
  setup: SetupStatus;
  /** The company tools of the directory's MCP servers (issue 42); null when none is declared. */
  mcp: McpTools | null;
  stop(): Promise<void>;
}

/**
 * The composition root: configuration → database (embedded when DATABASE_URL is unset) → migrations →
 * organisation directory → queue and alerts → brain and pipeline → adapters → HTTP → workers → background.
 * `HISHO_ROLE` (./roles.ts) chooses which of the last four this process runs; every role stores and posts.
 */
export async function startService(config: Readonly<Env>, o: ServiceOverrides = {}): Promise<Service> {
  const t0 = performance.now();
  const duties = dutiesOf(config.HISHO_ROLE);
  const logger = o.logger ?? createLogger(config.LOG_LEVEL);
  const metrics = createMetrics({ defaultMetrics: config.NODE_ENV !== 'test' });
  const instanceId = o.instanceId ?? `hisho-${process.pid}-${randomUUID().slice(0, 8)}`;
  // HISHO_COUNT_SQL=1: every statement is counted by shape (logged at stop; benchmarks read `sqlStatements`).
  const sqlStatements = statementCounterFromEnv();

  // Every outbound call (model, ChatWork, Discord REST) through the company proxy when one is set.
  useProxies({ httpsProxy: config.HTTPS_PROXY, httpProxy: config.HTTP_PROXY, noProxy: config.NO_PROXY });
  // A persona file, the port and the database are told in one sentence before anything starts (./startup-checks.ts).
  const prompts = personaPrompts(config);
  await checkPortFree(config.PORT).catch((err: Error) => {
    // The same .env started twice: the port is taken by Hisho itself, and that is what to say.
    const running = config.DATABASE_URL ? null : runningOnEmbedded(config.EMBEDDED_DATA_DIR);
    throw running ? embeddedInUseFailure(running) : err;
  });
  const database = await connectDatabase(config, logger);
  const { db, sql } = database;
  metrics.databaseUp.set(1);
  const org = await loadOrganisations(config, database, logger);
  const mcp = await startMcp(org, db, logger, o);

  // Work enqueued in this process wakes a claim loop here at once; other processes find it with their poll.
  let pool: WorkerPool | null = null;
  const wake = () => pool?.wake();
  const wakeMany = (n: number) => pool?.wakeMany(n);

  const chatwork = connectChatwork(config, logger, o);
  const outbox = new Outbox(db, {
    pool: database.pgPool,
    claimMarginMs: postingMarginMs(config.WORK_CLAIM_TTL_MS),
    reconcileDelayMs: o.outboxReconcileDelayMs,
  });
  const senders = new Senders(outbox);
  const alerts = new AdminAlerts({
    db,
    sql,
    logger,
    metrics,
    prompts,
    instanceId,
    windowMs: alertWindowMs(config),
    platforms: senders.platforms,
    senders: senders.byPlatform,
    now: o.now,
    timezone: config.BOT_TIMEZONE,
    chatworkRoomExists: async (roomId) => (chatwork ? (await chatwork.client.getRoomMembers(roomId), true) : false),
    onEnqueued: wakeMany,
  });
  const raise = (a: Parameters<AdminAlerts['raise']>[0]) => {
    void alerts
      .raise(a)
      .catch((err: Error) => logger.warn({ alert: a.kind, err: err.name }, 'admin alert could not be stored'));
  };
  const queue = new WorkQueue(db, {
    instanceId,
    claimTtlMs: config.WORK_CLAIM_TTL_MS,
    defaultMaxAttempts: config.WORK_MAX_ATTEMPTS,
    pool: database.pgPool,
    // An intake-only process tells the turns processes what it stored (./roles.ts).
    notify: duties.stored === 'notify',
    // An item that gave up is alerted, and a worker woken for its apology (SPEC §5: never silent).
    onGaveUp: (g) => {
      raise(gaveUpAlert(g));
      if (g.apology) wake();
    },
  });
  const intake = new Intake(queue, wake);

  // What is set up and what is not: the AI check, /admin's setup section, a log line for each thing missing.
  const setup = new SetupStatus({
    config,
    logger,
    db,
    sql,
    raise,
    dataDir: database.embedded?.dataDir ?? null,
    now: o.now,
  });
  const { llm, pipeline } = buildPipeline({
    config,
    o,
    database,
    org,
    logger,
    metrics,
    prompts,
    raise,
    wake,
    outbox,
    chatwork,
    setup,
    mcp,
  });
  const buttonAnswer = createButtonAnswers({
    pending: pipeline.pending,
    intake,
    prompts,
    logger,
    timezone: config.BOT_TIMEZONE,
    now: o.now,
  });
  // Discord's 「変更する」: the form of a pending action, and its submission as a change request.
  const editForms = createEditForms({
    pending: pipeline.pending,
    registry: pipeline.registry,
    intake,
    prompts,
    logger,
    timezone: config.BOT_TIMEZONE,
    now: o.now,
  });

  const adapters = await startAdapters({
    config,
    o,
    duties,
    logger,
    metrics,
    raise,
    prompts,
    intake,
    org,
    chatwork,
    senders,
    buttonAnswer,
    editForms,
    db,
  });
  // Set once the background starts; the admin pages ask for it when they show the schedules.
  let scheduler: NoticeScheduler | null = null;
  const http = await startHttp({
    config,
    o,
    duties,
    logger,
    metrics,
    db,
    sql,
    queue,
    intake,
    org,
    adapters,
    prompts,
    buttonAnswer,
    llmConfigured: llm !== null,
    scheduler: () => scheduler,
    setup,
    mcp,
  });

  pool = startWorkers({ config, o, duties, logger, queue, alerts, pipeline, intake });
  // A turns process hears the messages an intake process stored (its poll stays the fallback).
  const notices =
    duties.stored === 'listen'
      ? new WorkNotices({
          connectionString: database.url,
          logger,
          onStored: (ids) => pool?.wakeMany(ids.length),
          onListening: () => pool?.wake(),
        })
      : null;
  await notices?.start();
  const background = await startBackground({
    config,
    o,
    duties,
    logger,
    metrics,
    database,
    instanceId,
    prompts,
    alerts,
    senders,
    outbox,
    wakeMany,
  });
  scheduler = background.scheduler;

  setup.parts.adapters = () =>
    adapters.supervisor.status().map((a) => ({
      platform: a.platform,
      state: a.state,
      reasonJa: adapters.supervisor.reasonJa(a.platform),
    }));
  setup.parts.chatworkAccount = () => chatwork?.identity.accountId;
  await setup.logMissing();
  if (o.llmCheck ?? config.NODE_ENV !== 'test') setup.checkAi(llm);

  const startupMs = Math.round(performance.now() - t0);
  logger.info(
    {
      port: http.port,
      role: config.HISHO_ROLE,
      startupMs,
      adapters: adapters.supervisor.status().map((a) => a.platform),
      llm: llm !== null,
      embedded: database.embedded !== null,
    },
    'Hisho is up',
  );

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      await http.stop();
      await background.stop();
      await notices?.stop();
      await pool!.stop(7000);
      await org.stop();
      await mcp?.close();
      if (sqlStatements)
        logger.info({ total: sqlStatements.total, byShape: sqlStatements.byShape() }, 'SQL statements');
      await adapters.stop();
      await database.stop();
    })());
  return {
    config,
    db,
    logger,
    metrics,
    queue,
    pool,
    intake,
    server: http.server,
    port: http.port,
    databaseUrl: database.url,
    startupMs,
    scheduler,
    alerts,
    sqlStatements,
    monitor: background.monitor,
    adapters: adapters.supervisor,
    setup,
    mcp,
    stop,
  };
}

// ---- database -------------------------------------------------------------------------------------------------

interface Database {
  url: string;
  db: Db;
  pgPool: Pool;
  sql: Sql;
  embedded: EmbeddedDatabase | null;
  stop(): Promise<void>;
}

/** The configured PostgreSQL, or an embedded one when DATABASE_URL is unset; migrations applied. */
async function connectDatabase(config: Readonly<Env>, logger: Logger): Promise<Database> {
  let embedded: EmbeddedDatabase | null = null;
  let url = config.DATABASE_URL;
  if (!url) {
    embedded = await startEmbeddedPostgres({
      dataDir: config.EMBEDDED_DATA_DIR,
      persistent: true,
      log: (l) => logger.debug({ component: 'embedded-postgres' }, l),
    }).catch((err: Error) => {
      throw err instanceof EmbeddedInUse ? embeddedInUseFailure(err) : err;
    });
    url = embedded.url;
    logger.info(
      { dataDir: embedded.dataDir },
      `DATABASE_URL unset: embedded PostgreSQL started; its data folder is ${embedded.dataDir}`,
    );
  } else {
    await checkDatabase(url);
  }
  const migrations = await applyMigrations(url);
  if (migrations.applied.length > 0) logger.info({ applied: migrations.applied }, 'migrations applied');
  const { db, pool: pgPool } = createDatabase({ url, poolMax: config.DATABASE_POOL_MAX });
  const stop = async () => {
    await db.$disconnect();
    await pgPool.end().catch(() => undefined);
    if (embedded) await embedded.stop();
  };
  return { url, db, pgPool, sql: sqlRunner(db, pgPool), embedded, stop };
}

// ---- organisation directory -----------------------------------------------------------------------------------

interface Organisations extends OrgCaches {
  /** The first organisation (DMs and the console belong to it). */
  defaultOrgId: () => string | undefined;
  /** The MCP servers the imported directory file declares, and its organisation (issue 42). */
  mcp: { orgId: string; servers: McpServerSection[]; env: Record<string, string | undefined> } | null;
}

/** Imports the configured directory (or the sample on an empty database) and starts the per-organisation caches. */
async function loadOrganisations(config: Readonly<Env>, d: Database, logger: Logger): Promise<Organisations> {
  const { db } = d;
  const directoryFile = config.ORG_DIRECTORY_FILE ?? ((await db.organization.count()) === 0 ? SAMPLE_DIRECTORY : null);
  let mcp: Organisations['mcp'] = null;
  if (directoryFile) {
    // `${NAME}` references of MCP server sections are checked (and later resolved) against the environment.
    const env = environment();
    const summary = await importDirectoryFile(db, directoryFile, env).catch((err: Error) => {
      throw err instanceof DirectoryImportError ? directoryFailure(err) : err;
    });
    logger.info({ file: path.basename(directoryFile) }, formatImportSummary(summary));
    if (summary.mcpServers) mcp = { orgId: summary.orgId, servers: summary.mcpServers, env };
  }
  const first = await db.organization.findFirst({ orderBy: { createdAt: 'asc' }, select: { id: true } });
  const caches = await startOrgCaches({ db, sql: d.sql, databaseUrl: d.url, logger });
  return { ...caches, defaultOrgId: () => first?.id, mcp };
}

/**
 * The company tools of the directory's MCP servers (issue 42): connected in the background (a server that is down
 * is tried again; the service never waits long for one); null when none is declared.
 */
async function startMcp(org: Organisations, db: Db, logger: Logger, o: ServiceOverrides): Promise<McpTools | null> {
  if (!org.mcp) return null;
  const { orgId, servers, env } = org.mcp;
  const tools = new McpTools({
    approvals: new McpApprovals(db),
    orgId,
    servers: servers.map((s) => serverSpec(s, env)),
    retryMs: o.mcpRetryMs,
    // The error's kind only: a message could carry a header or an argument.
    onError: (server, what, err) =>
      logger.warn(
        { mcpServer: server, err: err instanceof Error ? err.name : typeof err },
        `MCP server ${what} failed`,
      ),
  });
  await tools.start();
  for (const t of tools.status())
    if (t.state !== 'enabled')
      logger.info({ mcpServer: t.serverId, tool: t.tool, state: t.state }, 'MCP tool not offered');
  return tools;
}

// ---- brain and pipeline ---------------------------------------------------------------------------------------

/** ChatWork's API client and the bot's identity (GET /me, in the background), when ChatWork is configured. */
interface ChatworkConnection {
  client: ChatworkClient;
  identity: ChatworkBotIdentity;
}

function connectChatwork(config: Readonly<Env>, logger: Logger, o: ServiceOverrides): ChatworkConnection | null {
  if (!chatworkOn(config)) return null;
  const client = chatworkClientFrom(config, logger);
  const known = o.chatworkBotAccountId ? { accountId: o.chatworkBotAccountId } : undefined;
  const identity = new ChatworkBotIdentity({
    getMe: () => client.getMe(),
    logger,
    known,
    retryMs: o.chatworkMeRetryMs,
  });
  return { client, identity };
}

const chatworkOn = (config: Readonly<Env>) => Boolean(config.CHATWORK_API_TOKEN && config.CHATWORK_WEBHOOK_TOKEN);
const discordOn = (config: Readonly<Env>) => Boolean(config.DISCORD_BOT_TOKEN && config.DISCORD_ENABLED);
const alertWindowMs = (config: Readonly<Env>) => config.ALERT_WINDOW_MINUTES * 60_000;

/** Names people address the bot by: the persona's, and the ChatWork display name once GET /me answered. */
function botNamesOf(prompts: PromptSet, chatwork: ChatworkConnection | null): () => readonly string[] {
  const names = personaNames(prompts);
  return () => (chatwork?.identity.name ? [...names, chatwork.identity.name] : names);
}

/** ChatWork room members not in the directory, known by name (issue 12 §3): in memory, per room, with a TTL. */
function roomMembersOf(
  config: Readonly<Env>,
  logger: Logger,
  chatwork: ChatworkConnection | null,
): ((msg: InboundMessage) => Promise<readonly RoomMember[]>) | undefined {
  if (!chatwork) return undefined;
  const cache = new RoomMembersCache({
    ttlMs: config.CHATWORK_ROOM_MEMBERS_TTL_SECONDS * 1000,
    logger,
    list: async (roomId) => {
      const members = await chatwork.client.getRoomMembers(roomId, { maxRetries: 0, timeoutMs: 2000 });
      const bot = chatwork.identity.accountId;
      return members.filter((m) => m.accountId !== bot).map((m) => ({ accountId: m.accountId, name: m.name }));
    },
  });
  return async (msg) => (msg.platform === 'chatwork' ? cache.forRoom(msg.roomId) : []);
}

/** The brain (the model client, null without a key) and the turn pipeline with self-critique and summaries. */
function buildPipeline(d: {
  config: Readonly<Env>;
  o: ServiceOverrides;
  database: Database;
  org: Organisations;
  logger: Logger;
  metrics: Metrics;
  prompts: PromptSet;
  raise: (a: Parameters<AdminAlerts['raise']>[0]) => void;
  wake: () => void;
  outbox: Outbox;
  chatwork: ChatworkConnection | null;
  setup: SetupStatus;
  mcp: McpTools | null;
}): { llm: LlmClient | null; pipeline: Stages } {
  const { config, o, database, org, logger, prompts, raise, wake } = d;
  const { db, sql } = database;
  const { llm, costGuard, brain } = composeBrain(config, {
    db,
    logger,
    prompts,
    raise,
    now: o.now,
    llm: o.llm,
    watch: (l, checker) => d.setup.watch(l, checker),
  });
  const critique: CritiqueInput | undefined = llm
    ? {
        reviewer: new Reviewer({ llm, models: costGuard }),
        onConcern: (turnId, risk) =>
          raise({ kind: 'self_critique_concern', severity: 'info', facts: { turnIds: turnId, value: risk } }),
        onEnqueued: wake,
      }
    : undefined;
  const summarizer = llm ? new Summarizer({ llm, models: costGuard }) : null;
  const pipeline = composeStages({
    config,
    db,
    sql,
    logger,
    metrics: d.metrics,
    prompts,
    brain,
    llmConfigured: llm !== null,
    outbox: d.outbox,
    chatwork: () => d.chatwork?.client ?? null,
    botNames: botNamesOf(prompts, d.chatwork),
    critique,
    summaries: summarizer ? { summarizer, onEnqueued: wake } : undefined,
    roomMembers: roomMembersOf(config, logger, d.chatwork),
    directories: org.directories,
    knowledgePresence: org.knowledgePresence,
    orgInfo: org.orgInfo,
    now: o.now,
    toolSources: d.mcp ? [d.mcp.definitions] : [],
  });
  return { llm, pipeline };
}

// ---- adapters -------------------------------------------------------------------------------------------------

/** The platforms' senders: registered with the outbox, and kept for admin alerts' direct path and the closer. */
class Senders {
  readonly byPlatform = new Map<Platform, ChatSender>();
  readonly platforms = new Set<Platform>();

  constructor(private readonly outbox: Outbox) {}

  register(sender: ChatSender): void {
    this.outbox.register(sender);
    this.byPlatform.set(sender.platform, sender);
    this.platforms.add(sender.platform);
  }
}

interface Adapters {
  supervisor: AdapterSupervisor;
  /** The console's sender when the console is on (its page is served by a role with intake). */
  consoleSender: ConsoleSender | null;
  routers: Router[];
  stop(): Promise<void>;
}

/**
 * The platform adapters: each connects on its own, in the background; the service is up without them (issue 29).
 * Every role posts (its senders are registered); only a role with intake mounts the webhooks and the console and
 * takes Discord's messages in.
 */
async function startAdapters(d: {
  config: Readonly<Env>;
  o: ServiceOverrides;
  duties: RoleDuties;
  logger: Logger;
  metrics: Metrics;
  raise: (a: Parameters<AdminAlerts['raise']>[0]) => void;
  prompts: PromptSet;
  intake: Intake;
  org: Organisations;
  chatwork: ChatworkConnection | null;
  senders: Senders;
  buttonAnswer: ButtonAnswer;
  editForms: ReturnType<typeof createEditForms>;
  db: Db;
}): Promise<Adapters> {
  const { config, o, duties, logger, metrics, intake, org, chatwork, senders, buttonAnswer } = d;
  const supervisor = new AdapterSupervisor({
    logger,
    metrics,
    raise: d.raise,
    downAlertMs: o.adapterDownAlertMs ?? config.ADAPTER_DOWN_ALERT_MINUTES * 60_000,
    firstRetryMs: o.adapterRetryMs,
    now: o.now,
  });
  const routers: Router[] = [];
  const stoppers: (() => Promise<void>)[] = [async () => supervisor.stop()];
  const botNames = botNamesOf(d.prompts, chatwork);

  if (chatwork) {
    const { client, identity } = chatwork;
    // GET /me runs in the background (retried until it answers): start-up does not wait for ChatWork, and a
    // room message that arrives first waits briefly for the same request.
    void identity.start();
    stoppers.push(async () => identity.stop());
    senders.register(new ChatworkSender({ client, logger, botAccountId: () => identity.accountId }));
    if (duties.intake) {
      const webhook = createChatworkWebhookHandler({
        webhookToken: config.CHATWORK_WEBHOOK_TOKEN!,
        getBotAccountId: () => identity.accountId,
        intake,
        getBotNames: botNames,
        refreshBotAccount: () => identity.refresh(),
        resolveOrgId: async (roomId) => (await org.rooms.get('chatwork', roomId))?.orgId ?? null,
        defaultOrgId: org.defaultOrgId,
        maxEventAgeSeconds: config.CHATWORK_EVENT_MAX_AGE_SECONDS,
        now: o.now,
        logger,
        // Count webhook answers by status (401/400/413/503 show up here, not in turn records).
        onAnswered: (status) => metrics.webhookAcks.inc({ platform: 'chatwork', status: String(status) }),
      });
      routers.push(chatworkWebhookRouter(webhook));
    }
    supervisor.always('chatwork');
  }

  if (discordOn(config)) {
    const { DiscordGateway, classifyDiscordFailure } = await import('../adapters/discord');
    const gateway = new DiscordGateway({
      token: config.DISCORD_BOT_TOKEN!,
      apiBaseUrl: config.DISCORD_API_BASE_URL,
      receive: duties.intake,
      intake,
      logger,
      defaultOrgId: org.defaultOrgId,
      client: o.discordClient,
      status: {
        up: () => supervisor.up('discord'),
        down: (reason, reasonJa) => supervisor.down('discord', reason, reasonJa),
        lost: (err) => supervisor.lost('discord', err),
      },
      resolveRoom: (channelId) => org.rooms.get('discord', channelId),
      // Guild allow-list (directory `organization.discord_guilds`).
      resolveGuild: (guildId) => org.guildOrgs.get(guildId),
      // `/hisho` and 「Hishoに頼む」 in the allow-listed guilds, registered once however many instances start.
      commands: { guildIds: org.allowListedGuilds, lock: (fn) => withSharedLock(d.db, 'discord-commands', fn) },
      onButton: (click) =>
        buttonAnswer({
          platform: 'discord',
          roomId: click.roomId,
          accountId: click.accountId,
          key: click.key,
          clickId: click.interactionId,
          ...(click.replyVia ? { replyVia: click.replyVia } : {}),
        }),
      onFormOpen: (click) =>
        d.editForms.open({
          platform: 'discord',
          roomId: click.roomId,
          accountId: click.accountId,
          key: click.key,
          interactionId: click.interactionId,
        }),
      onFormSubmit: (submit) =>
        d.editForms.submit({
          platform: 'discord',
          roomId: submit.roomId,
          accountId: submit.accountId,
          key: submit.key,
          interactionId: submit.interactionId,
          values: submit.values,
          ...(submit.replyVia ? { replyVia: submit.replyVia } : {}),
        }),
    });
    senders.register(gateway.sender());
    // Not awaited: a Discord outage (5xx, no READY, a refused token) leaves ChatWork and the console working.
    supervisor.supervise({ platform: 'discord', connect: () => gateway.start(), classify: classifyDiscordFailure });
    stoppers.push(() => gateway.stop());
  }

  const consoleOn =
    config.CONSOLE_ENABLED === 'true' ||
    (config.CONSOLE_ENABLED === 'auto' && !chatworkOn(config) && !discordOn(config));
  const consoleSender = consoleOn ? new ConsoleSender() : null;
  if (consoleSender) {
    senders.register(consoleSender);
    supervisor.always('console');
  }
  const stop = async () => {
    for (const s of stoppers) await s().catch(() => undefined);
  };
  return { supervisor, routers, consoleSender, stop };
}

// ---- HTTP -----------------------------------------------------------------------------------------------------

/**
 * The HTTP server: /healthz, /readyz and /metrics in every role; with intake, the webhooks, /admin and the console.
 */
async function startHttp(d: {
  config: Readonly<Env>;
  o: ServiceOverrides;
  duties: RoleDuties;
  logger: Logger;
  metrics: Metrics;
  db: Db;
  sql: Sql;
  queue: WorkQueue;
  intake: Intake;
  org: Organisations;
  adapters: Adapters;
  prompts: PromptSet;
  buttonAnswer: ButtonAnswer;
  llmConfigured: boolean;
  scheduler: () => NoticeScheduler | null;
  setup: SetupStatus;
  mcp: McpTools | null;
}): Promise<{ server: Server; port: number; stop(): Promise<void> }> {
  const { config, o, logger, metrics, db, queue, adapters } = d;
  const routers = [...adapters.routers];
  if (d.duties.intake) {
    // One admin login for /admin and the remote console (R-O4, issue 8 §4).
    const auth = new AdminAuth({ token: config.ADMIN_TOKEN, logger });
    const timezone = config.BOT_TIMEZONE;
    routers.push(
      createAdminRouter({
        db,
        sql: d.sql,
        auth,
        logger,
        timezone,
        jpyPerUsd: config.COST_JPY_PER_USD,
        scheduler: d.scheduler,
        now: o.now,
        setup: () => d.setup.report(),
        mcp: d.mcp ?? undefined,
      }),
    );
    if (adapters.consoleSender)
      routers.push(
        createConsoleRouter({
          db,
          intake: d.intake,
          sender: adapters.consoleSender,
          buttons: d.buttonAnswer,
          defaultOrgId: d.org.defaultOrgId,
          allowRemote: config.CONSOLE_ALLOW_REMOTE,
          allowedHosts: config.CONSOLE_ALLOWED_HOSTS,
          auth,
          logger,
          setupNotice: () => (d.llmConfigured ? null : personaMessage(d.prompts, 'console.no_llm', 'ja')),
        }),
      );
  }
  const app = createApp({
    logger,
    metrics,
    routers,
    ready: async () => {
      await db.$queryRaw`SELECT 1`;
      return true;
    },
    adapters: () => adapters.supervisor.status(),
    beforeScrape: async () => {
      const depth = await queue.depth();
      metrics.queueDepth.set({ state: 'queued' }, depth.queued ?? 0);
      metrics.queueDepth.set({ state: 'running' }, depth.running ?? 0);
    },
  });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = createServer(app);
    s.once('error', (err: NodeJS.ErrnoException) => reject(listenFailure(err, config.PORT)));
    s.listen(config.PORT, () => resolve(s));
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.PORT;
  const stop = async () => {
    await new Promise<void>((r) => server.close(() => r()));
    server.closeAllConnections?.();
  };
  return { server, port, stop };
}

// ---- workers --------------------------------------------------------------------------------------------------

/**
 * The claim loops over the durable work queue, for the kinds of work items this role claims (none: the pool is
 * built but claims nothing). The intake only stores a message and wakes a loop; claims, heartbeats and retries
 * are the queue's.
 */
function startWorkers(d: {
  config: Readonly<Env>;
  o: ServiceOverrides;
  duties: RoleDuties;
  logger: Logger;
  queue: WorkQueue;
  alerts: AdminAlerts;
  pipeline: Stages;
  intake: Intake;
}): WorkerPool {
  const { config, queue, alerts, pipeline } = d;
  const pool = new WorkerPool({
    queue,
    concurrency: config.WORKER_CONCURRENCY,
    logger: d.logger,
    pollMs: d.o.workerPollMs,
    claimTtlMs: config.WORK_CLAIM_TTL_MS,
    handlers: workItemHandlers(pipeline, d.duties.claims),
    describeError: describeWorkError,
    onDatabaseDown: (error) => alerts.databaseDown(error),
    onDatabaseUp: () => alerts.databaseUp(),
    // The intake of this process first (decision 0002): no new turn starts while webhooks are being stored.
    hold: { busy: () => d.intake.busy, whenIdle: () => d.intake.whenIdle(), maxMs: 200 },
  });
  pool.start();
  return pool;
}

// ---- background -----------------------------------------------------------------------------------------------

/**
 * What runs on timers: the reminder sweep, the notice scheduler, the alert thresholds and the nightly maintenance
 * (a role with background duties), the closing of decided questions' buttons (a role that runs turns), and the
 * admin alerts' rooms (every role raises alerts).
 */
async function startBackground(d: {
  config: Readonly<Env>;
  o: ServiceOverrides;
  duties: RoleDuties;
  logger: Logger;
  metrics: Metrics;
  database: Database;
  instanceId: string;
  prompts: PromptSet;
  alerts: AdminAlerts;
  senders: Senders;
  outbox: Outbox;
  wakeMany: (n: number) => void;
}): Promise<{ scheduler: NoticeScheduler | null; monitor: AlertMonitor; stop(): Promise<void> }> {
  const { config, o, duties, logger, metrics, alerts, wakeMany } = d;
  const { db, sql } = d.database;
  // Due chat-schedule periods, then due reminders → notification work items (once across instances: the
  // period row, the item's dedupe key).
  const chatSweep = {
    db,
    sql,
    logger,
    instanceId: d.instanceId,
    horizonMs: config.NOTICE_CATCHUP_HORIZON_MINUTES * 60_000,
  };
  const stopSweep = duties.background
    ? startReminderSweep({
        sql,
        logger,
        intervalMs: o.reminderSweepMs ?? 15000,
        onEnqueued: wakeMany,
        now: o.now,
        before: async (now) => (await fireDueChatSchedules(chatSweep, now)).created,
      })
    : () => undefined;
  const schedulerOn =
    duties.background && (o.noticeScheduler ?? (config.NOTICES_ENABLED && config.NODE_ENV !== 'test'));
  const scheduler = schedulerOn
    ? new NoticeScheduler({
        db,
        sql,
        logger,
        metrics,
        instanceId: d.instanceId,
        platforms: new Set(PLATFORMS.filter((p) => d.outbox.hasSender(p))),
        catchUpHorizonMs: config.NOTICE_CATCHUP_HORIZON_MINUTES * 60_000,
        reloadMs: o.scheduleReloadMs ?? config.SCHEDULE_RELOAD_SECONDS * 1000,
        now: o.now,
        onEnqueued: wakeMany,
      })
    : null;
  await scheduler?.start();
  // Buttons follow the state: decided confirmations' questions lose their buttons (Discord edit, console).
  const questionCloser = duties.closesQuestions
    ? new QuestionCloser({
        db,
        prompts: d.prompts,
        senders: d.senders.byPlatform,
        logger,
        now: o.now,
        intervalMs: o.questionCloseMs ?? o.workerPollMs ?? 1000,
      })
    : null;
  questionCloser?.start();
  await alerts.start();
  const monitor = new AlertMonitor({
    sql,
    alerts,
    logger,
    timezone: config.BOT_TIMEZONE,
    windowMs: alertWindowMs(config),
    intervalMs: config.ALERT_CHECK_SECONDS * 1000,
    now: o.now,
    thresholds: {
      llmP95Seconds: config.ALERT_LLM_P95_SECONDS,
      toolErrorRate: config.ALERT_TOOL_ERROR_RATE,
      confirmationRate: config.ALERT_CONFIRMATION_RATE,
      blockRate: config.ALERT_BLOCK_RATE,
      dailyCostUsd: config.ALERT_DAILY_COST_USD,
      evalMinutes: config.ALERT_EVAL_MINUTES,
      minSamples: config.ALERT_MIN_SAMPLES,
    },
  });
  if (duties.background && (o.alertMonitor ?? config.NODE_ENV !== 'test')) monitor.start();
  const maintenance =
    duties.background && config.NODE_ENV !== 'test'
      ? scheduleMaintenance({
          db,
          logger,
          timezone: config.BOT_TIMEZONE,
          policy: { auditDays: config.RETENTION_AUDIT_DAYS, historyDays: config.RETENTION_HISTORY_DAYS },
        })
      : null;
  const stop = async () => {
    stopSweep();
    await scheduler?.stop();
    await questionCloser?.stop();
    monitor.stop();
    await maintenance?.stop();
  };
  return { scheduler, monitor, stop };
}

/** The persona's prompts; a persona file (PERSONA_FILE) that cannot be used stops start-up with one sentence. */
function personaPrompts(config: Pick<Env, 'PERSONA' | 'PERSONA_FILE'>): PromptSet {
  try {
    return loadPrompts(config.PERSONA, PROMPTS_DIR, config.PERSONA_FILE);
  } catch (err) {
    if (err instanceof PersonaFileError) throw new StartupError(err.say(terminalLanguage()));
    throw err;
  }
}
