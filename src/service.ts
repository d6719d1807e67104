import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import type { Router } from 'express';
import {
  CHATWORK_WEBHOOK_PATH,
  ChatworkClient,
  chatworkClientFrom,
  ChatworkSender,
  chatworkWebhookRouter,
  createChatworkWebhookHandler,
} from './adapters/chatwork';
import { ChatworkBotIdentity } from './adapters/chatwork/bot-identity';
import { ConsoleSender } from './adapters/console/console-sender';
import { AdapterSupervisor } from './adapters/supervisor';
import { createConsoleRouter } from './adapters/console/console.route';
import type { Env } from './config/env';
import { type LlmClient } from './brain/llm-client';
import { loadPrompts } from './brain/prompts';
import { personaMessage, personaNames } from './core/messages';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded-postgres';
import { applyMigrations } from './db/migrate';
import { createDatabase, type Db } from './db/prisma';
import { sqlRunner } from './db/sql';
import { statementCounterFromEnv, type StatementCounter } from './db/statement-counter';
import { Intake } from './intake/intake';
import { WorkerPool } from './intake/worker-pool';
import { WorkQueue } from './intake/work-queue';
import { createLogger, type Logger } from './observability/logger';
import { createMetrics, type Metrics } from './observability/metrics';
import { formatImportSummary, importDirectoryFile } from './org/import-directory';
import { Outbox } from './outbox/outbox';
import { createButtonAnswers } from './pipeline/button-answers';
import { QuestionCloser } from './pipeline/question-closer';
import { enqueueDueReminders } from './scheduler/reminders';
import { createApp, requestListener, type FastRoute } from './server/app';
import { scheduleMaintenance } from './scheduler/maintenance';
import { NoticeScheduler } from './scheduler/notices/notice-scheduler';
import { PLATFORMS } from './org/directory.schema';
import { AdminAlerts, gaveUpAlert } from './observability/alerts';
import { AlertMonitor } from './observability/alert-monitor';
import type { ChatSender, InboundMessage, Platform } from './adapters/types';
import { Reviewer } from './brain/critique';
import { Summarizer } from './brain/summarize';
import { RoomMembersCache } from './context/room-members';
import type { RoomMember } from './context/types';
import { AdminAuth } from './server/admin-auth';
import { createAdminRouter } from './server/admin/admin.route';
import {
  composeBrain,
  composePipeline,
  describeWorkError,
  claimNamedBy,
  workItemHandlers,
  type CritiqueInput,
} from './pipeline/compose';
import { startOrgCaches } from './org/org-caches';
import { loadAllRooms, RoomIndex } from './org/room-index';

export const SAMPLE_DIRECTORY = path.resolve(__dirname, '..', 'config', 'org.sample.yaml');

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
}

export interface Service {
  config: Readonly<Env>;
  db: Db;
  logger: Logger;
  metrics: Metrics;
  queue: WorkQueue;
  /** The turns' claim loops over the work queue, in this process. */
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
  /** Threshold checks (started unless off; `check()` runs one). */
  monitor: AlertMonitor;
  /** The platform adapters that are on, and whether each is connected (/readyz, /metrics). */
  adapters: AdapterSupervisor;
  stop(): Promise<void>;
}

/**
 * The composition root: configuration → database (embedded when DATABASE_URL is unset) → migrations →
 * organisation directory → brain and pipeline → adapters → HTTP → workers.
 */
export async function startService(config: Readonly<Env>, o: ServiceOverrides = {}): Promise<Service> {
  const t0 = performance.now();
  const logger = o.logger ?? createLogger(config.LOG_LEVEL);
  const metrics = createMetrics({ defaultMetrics: config.NODE_ENV !== 'test' });
  const instanceId = o.instanceId ?? `hisho-${process.pid}-${randomUUID().slice(0, 8)}`;
  // HISHO_COUNT_SQL=1: every statement is counted by shape (logged at stop; benchmarks read `sqlStatements`).
  const sqlStatements = statementCounterFromEnv();

  let embedded: EmbeddedDatabase | null = null;
  let databaseUrl = config.DATABASE_URL;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres({
      dataDir: config.EMBEDDED_DATA_DIR,
      persistent: true,
      log: (l) => logger.debug({ component: 'embedded-postgres' }, l),
    });
    databaseUrl = embedded.url;
    logger.info({ dataDir: embedded.dataDir }, 'DATABASE_URL unset: embedded PostgreSQL started');
  }
  const migrations = await applyMigrations(databaseUrl);
  if (migrations.applied.length > 0) logger.info({ applied: migrations.applied }, 'migrations applied');
  const { db, pool: pgPool } = createDatabase({ url: databaseUrl, poolMax: config.DATABASE_POOL_MAX });
  const sql = sqlRunner(db, pgPool);
  metrics.databaseUp.set(1);

  // Organisation directory: the configured file, or the sample on an empty database.
  const directoryFile = config.ORG_DIRECTORY_FILE ?? ((await db.organization.count()) === 0 ? SAMPLE_DIRECTORY : null);
  if (directoryFile) {
    const summary = await importDirectoryFile(db, directoryFile);
    logger.info({ file: path.basename(directoryFile) }, formatImportSummary(summary));
  }
  const defaultOrg: string | undefined = (
    await db.organization.findFirst({ orderBy: { createdAt: 'asc' }, select: { id: true } })
  )?.id;
  const defaultOrgId = () => defaultOrg;
  // Every directory room in memory for the intake's room lookup (ChatWork webhooks, Discord channels): cleared on
  // every import, which every instance hears (below). Discord guilds → organisation: a small map, cleared with it.
  const roomIndex = new RoomIndex(() => loadAllRooms(sql));
  await roomIndex.warm();
  const stopRoomRefresh = roomIndex.startRefreshing();
  const guildOrg = new Map<string, { orgId: string | null; at: number }>();
  // The directory, knowledge presence and organisation per organisation; cleared on every import (and the room lookup
  // with them), and read again in the background before their bound for a missed notification.
  const {
    directories,
    knowledgePresence,
    orgInfo,
    changes: directoryChanges,
    stopRefreshing,
  } = await startOrgCaches({
    db,
    sql,
    databaseUrl,
    logger,
    onChange: () => {
      roomIndex.invalidate();
      guildOrg.clear();
    },
  });

  const queue = new WorkQueue(db, {
    instanceId,
    claimTtlMs: config.WORK_CLAIM_TTL_MS,
    defaultMaxAttempts: config.WORK_MAX_ATTEMPTS,
    pool: pgPool,
    // An item that gave up is alerted, and a worker woken for its apology (SPEC §5: never silent).
    onGaveUp: (g) => {
      raise(gaveUpAlert(g));
      if (g.apology) pool?.wake();
    },
  });
  let pool: WorkerPool | null = null;
  const intake = new Intake(queue, (hint) => pool?.wake(hint));

  const prompts = loadPrompts(config.PERSONA);
  // Adapters register their senders here (outbox + admin alerts' direct path); `platforms` fills as they start.
  const senders = new Map<Platform, ChatSender>();
  const platforms = new Set<Platform>();
  const register = (sender: ChatSender) => {
    outbox.register(sender);
    senders.set(sender.platform, sender);
    platforms.add(sender.platform);
  };
  const alertWindowMs = config.ALERT_WINDOW_MINUTES * 60_000;
  let chatworkClient: ChatworkClient | null = null;
  const alerts = new AdminAlerts({
    db,
    sql,
    logger,
    metrics,
    prompts,
    instanceId,
    windowMs: alertWindowMs,
    platforms,
    senders,
    now: o.now,
    chatworkRoomExists: async (roomId) =>
      chatworkClient ? (await chatworkClient.getRoomMembers(roomId), true) : false,
    onEnqueued: (n) => {
      for (let i = 0; i < n; i++) pool?.wake();
    },
  });
  const raise = (a: Parameters<AdminAlerts['raise']>[0]) => {
    void alerts
      .raise(a)
      .catch((err: Error) => logger.warn({ alert: a.kind, err: err.name }, 'admin alert could not be stored'));
  };
  const { llm, costGuard, brain } = composeBrain(config, { db, logger, prompts, raise, now: o.now, llm: o.llm });
  // A worker posts only while its claim has a third of its lifetime left (the heartbeat renews it every third).
  const outbox = new Outbox(db, {
    pool: pgPool,
    claimMarginMs: Math.floor(config.WORK_CLAIM_TTL_MS / 3),
    reconcileDelayMs: o.outboxReconcileDelayMs,
  });
  // Names people address the bot by: the persona's, and the ChatWork display name once GET /me answered.
  let chatworkIdentity: ChatworkBotIdentity | null = null;
  const names = personaNames(prompts);
  const botNames = () => (chatworkIdentity?.name ? [...names, chatworkIdentity.name] : names);
  const critique: CritiqueInput | undefined = llm
    ? {
        reviewer: new Reviewer({ llm, models: costGuard }),
        onConcern: (turnId, risk) =>
          raise({
            kind: 'self_critique_concern',
            severity: 'info',
            facts: { turnIds: turnId, value: risk },
          }),
        onEnqueued: () => pool?.wake(),
      }
    : undefined;
  const summarizer = llm ? new Summarizer({ llm, models: costGuard }) : null;
  // ChatWork room members not in the directory, known by name (issue 12 §3): in memory, per room, with a TTL.
  const roomMembersCache = new RoomMembersCache({
    ttlMs: config.CHATWORK_ROOM_MEMBERS_TTL_SECONDS * 1000,
    logger,
    list: async (roomId) => {
      const client = chatworkClient;
      if (!client) return [];
      const members = await client.getRoomMembers(roomId, { maxRetries: 0, timeoutMs: 2000 });
      const bot = chatworkIdentity?.accountId;
      return members.filter((m) => m.accountId !== bot).map((m) => ({ accountId: m.accountId, name: m.name }));
    },
  });
  const roomMembers = async (msg: InboundMessage): Promise<readonly RoomMember[]> =>
    msg.platform === 'chatwork' && chatworkClient ? roomMembersCache.forRoom(msg.roomId) : [];
  const { runner, notices, states, critic, summaries, work } = composePipeline({
    config,
    db,
    sql,
    logger,
    metrics,
    prompts,
    brain,
    llmConfigured: llm !== null,
    outbox,
    chatwork: () => chatworkClient,
    botNames,
    critique,
    summaries: summarizer ? { summarizer, onEnqueued: () => pool?.wake() } : undefined,
    roomMembers,
    directories,
    knowledgePresence,
    orgInfo,
    now: o.now,
  });
  const buttonAnswer = createButtonAnswers({
    states,
    intake,
    prompts,
    logger,
    timezone: config.BOT_TIMEZONE,
    now: o.now,
  });

  // Adapters: each connects on its own, in the background; the service is up without them (issue 29).
  const adapters = new AdapterSupervisor({
    logger,
    metrics,
    raise,
    downAlertMs: o.adapterDownAlertMs ?? config.ADAPTER_DOWN_ALERT_MINUTES * 60_000,
    firstRetryMs: o.adapterRetryMs,
    now: o.now,
  });
  const routers: Router[] = [];
  /** Webhook paths served before express (see requestListener); the routers serve any other form of them. */
  const fastRoutes: FastRoute[] = [];
  const stoppers: (() => Promise<void>)[] = [async () => adapters.stop()];
  const chatworkOn = Boolean(config.CHATWORK_API_TOKEN && config.CHATWORK_WEBHOOK_TOKEN);
  if (chatworkOn) {
    const client = chatworkClientFrom(config, logger);
    chatworkClient = client;
    const known = o.chatworkBotAccountId ? { accountId: o.chatworkBotAccountId } : undefined;
    const identity = new ChatworkBotIdentity({
      getMe: () => client.getMe(),
      logger,
      known,
      retryMs: o.chatworkMeRetryMs,
    });
    chatworkIdentity = identity;
    // GET /me runs in the background (retried until it answers): start-up does not wait for ChatWork, and a
    // room message that arrives first waits briefly for the same request.
    void identity.start();
    stoppers.push(async () => identity.stop());
    register(new ChatworkSender({ client, logger, botAccountId: () => identity.accountId }));
    const webhook = createChatworkWebhookHandler({
      webhookToken: config.CHATWORK_WEBHOOK_TOKEN!,
      getBotAccountId: () => identity.accountId,
      intake,
      getBotNames: botNames,
      refreshBotAccount: () => identity.refresh(),
      resolveOrgId: async (roomId) => (await roomIndex.get('chatwork', roomId))?.orgId ?? null,
      defaultOrgId,
      maxEventAgeSeconds: config.CHATWORK_EVENT_MAX_AGE_SECONDS,
      now: o.now,
      logger,
      // Count webhook answers by status (401/400/413/503 show up here, not in turn records).
      onAnswered: (status) => metrics.webhookAcks.inc({ platform: 'chatwork', status: String(status) }),
    });
    fastRoutes.push({ method: 'POST', path: CHATWORK_WEBHOOK_PATH, handle: webhook });
    // Other spellings of the path (a trailing slash, another case) reach the same handler through express.
    routers.push(chatworkWebhookRouter(webhook));
    adapters.always('chatwork');
  }
  const discordOn = Boolean(config.DISCORD_BOT_TOKEN && config.DISCORD_ENABLED);
  if (discordOn) {
    const { DiscordGateway, classifyDiscordFailure } = await import('./adapters/discord');
    const gateway = new DiscordGateway({
      token: config.DISCORD_BOT_TOKEN!,
      apiBaseUrl: config.DISCORD_API_BASE_URL,
      intake,
      logger,
      defaultOrgId,
      client: o.discordClient,
      status: {
        up: () => adapters.up('discord'),
        down: (reason, reasonJa) => adapters.down('discord', reason, reasonJa),
        lost: (err) => adapters.lost('discord', err),
      },
      resolveRoom: (channelId) => roomIndex.get('discord', channelId),
      // Guild allow-list (directory `organization.discord_guilds`); rooms change only on import (30 s cache).
      resolveGuild: async (guildId) => {
        const hit = guildOrg.get(guildId);
        if (hit && Date.now() - hit.at < 30000) return hit.orgId;
        const where = { discordGuildIds: { has: guildId } };
        const org = await db.organization.findFirst({ where, select: { id: true } });
        const orgId = org?.id ?? null;
        if (guildOrg.size > 10000) guildOrg.clear();
        guildOrg.set(guildId, { orgId, at: Date.now() });
        return orgId;
      },
      onButton: (click) =>
        buttonAnswer({
          platform: 'discord',
          roomId: click.roomId,
          accountId: click.accountId,
          key: click.key,
          clickId: click.interactionId,
        }),
    });
    register(gateway.sender());
    // Not awaited: a Discord outage (5xx, no READY, a refused token) leaves ChatWork and the console working.
    adapters.supervise({ platform: 'discord', connect: () => gateway.start(), classify: classifyDiscordFailure });
    stoppers.push(() => gateway.stop());
  }
  // One admin login for /admin and the remote console (R-O4, issue 8 §4).
  const auth = new AdminAuth({ token: config.ADMIN_TOKEN, logger });
  let scheduler: NoticeScheduler | null = null;
  routers.push(
    createAdminRouter({
      db,
      sql,
      auth,
      logger,
      timezone: config.BOT_TIMEZONE,
      scheduler: () => scheduler,
      now: o.now,
    }),
  );
  const consoleOn =
    config.CONSOLE_ENABLED === 'true' || (config.CONSOLE_ENABLED === 'auto' && !chatworkOn && !discordOn);
  if (consoleOn) {
    const sender = new ConsoleSender();
    register(sender);
    adapters.always('console');
    routers.push(
      createConsoleRouter({
        db,
        intake,
        sender,
        buttons: buttonAnswer,
        defaultOrgId,
        allowRemote: config.CONSOLE_ALLOW_REMOTE,
        allowedHosts: config.CONSOLE_ALLOWED_HOSTS,
        auth,
        logger,
        setupNotice: () => (llm ? null : personaMessage(prompts, 'console.no_llm', 'ja')),
      }),
    );
  }

  // Turns and the other work items run in this process, in claim loops over the durable work queue. The intake only
  // stores a message and wakes a loop (`Intake`); claims, heartbeats and retries are the queue's.
  pool = new WorkerPool({
    queue,
    concurrency: config.WORKER_CONCURRENCY,
    logger,
    pollMs: o.workerPollMs,
    claimTtlMs: config.WORK_CLAIM_TTL_MS,
    handlers: workItemHandlers({ runner, notices, critic, summaries, work }),
    describeError: describeWorkError,
    onDatabaseDown: (error) => alerts.databaseDown(error),
    onDatabaseUp: () => alerts.databaseUp(),
    claimNamed: claimNamedBy(runner, queue),
  });

  const app = createApp({
    logger,
    metrics,
    routers,
    ready: async () => {
      await db.$queryRaw`SELECT 1`;
      return true;
    },
    adapters: () => adapters.status(),
    beforeScrape: async () => {
      const depth = await queue.depth();
      metrics.queueDepth.set({ state: 'queued' }, depth.queued ?? 0);
      metrics.queueDepth.set({ state: 'running' }, depth.running ?? 0);
    },
  });
  const server = await new Promise<Server>((resolve) => {
    const s = createServer(requestListener(app, fastRoutes)).listen(config.PORT, () => resolve(s));
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.PORT;
  pool.start();
  // Due reminders → notification work items (once across instances: the item's dedupe key).
  const sweep = setInterval(() => {
    enqueueDueReminders(sql, o.now?.() ?? new Date())
      .then((n) => {
        for (let i = 0; i < n; i++) pool?.wake();
      })
      .catch((err: Error) => logger.warn({ err: err.name }, 'reminder sweep failed; retrying on the next tick'));
  }, o.reminderSweepMs ?? 15000);
  sweep.unref();
  const schedulerOn = o.noticeScheduler ?? (config.NOTICES_ENABLED && config.NODE_ENV !== 'test');
  scheduler = schedulerOn
    ? new NoticeScheduler({
        db,
        sql,
        logger,
        metrics,
        instanceId,
        platforms: new Set(PLATFORMS.filter((p) => outbox.hasSender(p))),
        catchUpHorizonMs: config.NOTICE_CATCHUP_HORIZON_MINUTES * 60_000,
        reloadMs: o.scheduleReloadMs ?? config.SCHEDULE_RELOAD_SECONDS * 1000,
        now: o.now,
        onEnqueued: (n) => {
          for (let i = 0; i < n; i++) pool?.wake();
        },
      })
    : null;
  await scheduler?.start();
  // Buttons follow the state: decided confirmations' questions lose their buttons (Discord edit, console).
  const questionCloser = new QuestionCloser({
    db,
    prompts,
    senders,
    logger,
    now: o.now,
    intervalMs: o.questionCloseMs ?? o.workerPollMs ?? 1000,
  });
  questionCloser.start();
  await alerts.start();
  const monitor = new AlertMonitor({
    sql,
    alerts,
    logger,
    timezone: config.BOT_TIMEZONE,
    windowMs: alertWindowMs,
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
  if (o.alertMonitor ?? config.NODE_ENV !== 'test') monitor.start();
  const maintenance =
    config.NODE_ENV === 'test'
      ? null
      : scheduleMaintenance({
          db,
          logger,
          timezone: config.BOT_TIMEZONE,
          policy: { auditDays: config.RETENTION_AUDIT_DAYS, historyDays: config.RETENTION_HISTORY_DAYS },
        });
  const startupMs = Math.round(performance.now() - t0);
  logger.info(
    {
      port,
      startupMs,
      adapters: adapters.status().map((a) => a.platform),
      llm: llm !== null,
      embedded: embedded !== null,
    },
    'Hisho is up',
  );

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      await new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections?.();
      clearInterval(sweep);
      await scheduler?.stop();
      await questionCloser.stop();
      monitor.stop();
      await maintenance?.stop();
      await pool!.stop(7000);
      stopRefreshing();
      stopRoomRefresh();
      await directoryChanges.stop();
      if (sqlStatements)
        logger.info({ total: sqlStatements.total, byShape: sqlStatements.byShape() }, 'SQL statements');
      for (const s of stoppers) await s().catch(() => undefined);
      await db.$disconnect();
      await pgPool.end().catch(() => undefined);
      if (embedded) await embedded.stop();
    })());
  return {
    config,
    db,
    logger,
    metrics,
    queue,
    pool,
    intake,
    server,
    port,
    databaseUrl,
    startupMs,
    scheduler,
    alerts,
    sqlStatements,
    monitor,
    adapters,
    stop,
  };
}
