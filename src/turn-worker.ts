/**
 * The composition root of one turn worker thread (WORKERS ≥ 1; see `TurnWorkers` in src/intake/turn-workers.ts).
 * It composes the same pipeline as the single-thread service on a database pool of its own and claims
 * work items from the shared queue. It posts to ChatWork and calls its tasks API with a ChatWork client of its
 * own; Discord and console posts, room-member lookups and admin alerts go to the main thread, which owns the
 * Discord gateway, the console's pollers and the room-member cache.
 */
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { ChatSender, FoundMessage, OutboundReply, SendResult } from './adapters/types';
import { Reviewer } from './brain/critique';
import { loadPrompts } from './brain/prompts';
import { createDatabase } from './db/prisma';
import { sqlRunner } from './db/sql';
import {
  fromRelayedError,
  type FromWorker,
  type RelayCall,
  type RelayedAlert,
  type ToWorker,
  type TurnWorkerData,
} from './intake/turn-workers';
import { WorkQueue } from './intake/work-queue';
import { WorkerPool } from './intake/worker-pool';
import { createLogger, type Logger } from './observability/logger';
import { createMetrics } from './observability/metrics';
import { Outbox } from './outbox/outbox';
import {
  composeBrain,
  composePipeline,
  describeWorkError,
  claimNamedBy,
  workItemHandlers,
  type CritiqueInput,
} from './pipeline/compose';
import { Summarizer } from './brain/summarize';
import type { InboundMessage } from './adapters/types';
import type { RoomMember } from './context/types';
import type { ChatworkTasksApi } from './tools/types';
import { startOrgCaches } from './org/org-caches';
import { chatworkClientFrom, ChatworkSender } from './adapters/chatwork';
import { IntakePressure } from './intake/intake-pressure';

/**
 * Lowers this thread's CPU priority by `by` (WORKER_NICE), so the main thread's intake comes first when turns
 * keep every core busy. Linux only: there niceness belongs to the thread; elsewhere it would lower the whole process.
 */
function lowerPriority(by: number, logger: Logger): void {
  if (by === 0 || process.platform !== 'linux') return;
  try {
    os.setPriority(0, Math.min(19, os.getPriority(0) + by));
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'worker.priority_unchanged');
  }
}

async function main(): Promise<void> {
  const port = parentPort!;
  const d = workerData as TurnWorkerData;
  const { config } = d;
  const post = (m: FromWorker) => port.postMessage(m);
  const logger = createLogger(config.LOG_LEVEL, { worker: d.index });
  lowerPriority(config.WORKER_NICE, logger);
  const metrics = createMetrics({ defaultMetrics: false });

  // Calls into the main thread, answered by `result` messages.
  let nextId = 0;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const call = <T>(c: RelayCall): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = ++nextId;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      post({ t: 'call', id, call: c });
    });

  const { db, pool: pgPool } = createDatabase({ url: d.databaseUrl, poolMax: d.poolMax });
  const sql = sqlRunner(db, pgPool);
  const queue = new WorkQueue(db, {
    instanceId: d.instanceId,
    claimTtlMs: config.WORK_CLAIM_TTL_MS,
    defaultMaxAttempts: config.WORK_MAX_ATTEMPTS,
    pool: pgPool,
  });
  const prompts = loadPrompts(config.PERSONA);
  const raise = (a: RelayedAlert) => post({ t: 'alert', alert: a });
  const { llm, costGuard, brain } = composeBrain(config, {
    db,
    logger,
    prompts,
    raise: (a) => raise(a as RelayedAlert),
  });
  const outbox = new Outbox(db, {
    pool: pgPool,
    claimMarginMs: Math.floor(config.WORK_CLAIM_TTL_MS / 3),
    reconcileDelayMs: d.outboxReconcileDelayMs,
  });
  for (const p of d.platforms) {
    const sender: ChatSender = {
      platform: p.platform,
      send: (reply: OutboundReply) => call<SendResult>({ op: 'send', platform: p.platform, reply }),
      ...(p.findPosted
        ? {
            findPosted: (reply: OutboundReply, since: Date) =>
              call<FoundMessage | null>({ op: 'findPosted', platform: p.platform, reply, since }),
          }
        : {}),
    };
    outbox.register(sender);
  }
  // ChatWork: this thread's own client (wake-ups of one room come here). With two or more worker threads, each post
  // waits for its room's turn in the main thread's limiter, which sees every thread's posts.
  let chatworkBot = d.chatworkBotAccountId;
  let chatwork: ChatworkTasksApi | null = null;
  if (d.chatwork) {
    const pacing = d.sharedRoomPacing
      ? { roomPacer: (roomId: string) => call<number>({ op: 'paceRoom', roomId }) }
      : {};
    const client = chatworkClientFrom(config, logger, pacing);
    chatwork = client;
    outbox.register(new ChatworkSender({ client, logger, botAccountId: () => chatworkBot }));
  }
  let names = d.botNames;

  const {
    directories,
    knowledgePresence,
    orgInfo,
    changes: directoryChanges,
    stopRefreshing,
  } = await startOrgCaches({ db, sql, databaseUrl: d.databaseUrl, logger });

  let pool: WorkerPool | null = null;
  const critique: CritiqueInput | undefined = llm
    ? {
        reviewer: new Reviewer({ llm, models: costGuard }),
        onConcern: (turnId, risk) =>
          raise({ kind: 'self_critique_concern', severity: 'info', facts: { turnIds: turnId, value: risk } }),
        onEnqueued: () => pool?.wake(),
      }
    : undefined;
  const { runner, notices, critic, summaries, work } = composePipeline({
    config,
    db,
    sql,
    logger,
    metrics,
    prompts,
    brain,
    llmConfigured: llm !== null,
    outbox,
    chatwork: () => chatwork,
    botNames: () => names,
    critique,
    summaries: llm
      ? { summarizer: new Summarizer({ llm, models: costGuard }), onEnqueued: () => pool?.wake() }
      : undefined,
    // Room members come from the main thread's ChatWork client and its cache.
    roomMembers: async (msg: InboundMessage): Promise<readonly RoomMember[]> =>
      msg.platform === 'chatwork' && d.chatwork ? call<RoomMember[]>({ op: 'roomMembers', roomId: msg.roomId }) : [],
    directories,
    knowledgePresence,
    orgInfo,
  });
  pool = new WorkerPool({
    queue,
    concurrency: config.WORKER_CONCURRENCY,
    logger,
    pollMs: d.workerPollMs,
    claimTtlMs: config.WORK_CLAIM_TTL_MS,
    handlers: workItemHandlers({ runner, notices, critic, summaries, work }),
    describeError: describeWorkError,
    onDatabaseDown: (error) => post({ t: 'database', up: false, error }),
    onDatabaseUp: () => post({ t: 'database', up: true }),
    onAbandoned: (count) => raise({ kind: 'work_abandoned', severity: 'warn', facts: { count } }),
    claimNamed: claimNamedBy(runner, queue),
    // Holds back while the main thread answers a burst of webhooks (its shared count and load).
    ...(d.intakePressure ? IntakePressure.from(d.intakePressure).holdOptions() : {}),
  });

  let stopping = false;
  port.on('message', (m: ToWorker) => {
    switch (m.t) {
      case 'wake':
        names = m.names;
        chatworkBot = m.chatworkBotAccountId ?? chatworkBot;
        pool?.wake(m.itemId ? { itemId: BigInt(m.itemId), orderingKey: m.orderingKey, message: m.message } : undefined);
        return;
      case 'metrics':
        void metrics.registry.getMetricsAsJSON().then((json) => post({ t: 'metrics', id: m.id, json }));
        return;
      case 'result': {
        const p = pending.get(m.id);
        if (!p) return;
        pending.delete(m.id);
        if (m.ok) p.resolve(m.value);
        else p.reject(fromRelayedError(m.error));
        return;
      }
      case 'stop':
        if (stopping) return;
        stopping = true;
        void (async () => {
          await pool!.stop(m.graceMs);
          stopRefreshing();
          await directoryChanges.stop();
          await db.$disconnect().catch(() => undefined);
          await pgPool.end().catch(() => undefined);
          process.exit(0);
        })();
        return;
    }
  });
  post({ t: 'ready' });
  pool.start();
}

main().catch((err: Error) => {
  console.error(`turn worker failed to start: ${err.message}`);
  process.exit(1);
});
