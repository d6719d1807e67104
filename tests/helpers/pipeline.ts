import type { InboundMessage } from '../../src/core/chat';
import { loadPrompts } from '../../src/brain/prompts';
import { loadConfig } from '../../src/config/env';
import type { DirectoryCache } from '../../src/authorization/directory-cache';
import type { RoomMember } from '../../src/context/types';
import { sqlRunner, type Sql } from '../../src/db/sql';
import { Intake } from '../../src/adapters/intake';
import { WorkQueue, type ClaimedItem, type GaveUp } from '../../src/queue/work-queue';
import { silentLogger } from '../../src/observability/logger';
import { createMetrics } from '../../src/observability/metrics';
import { Outbox } from '../../src/queue/outbox';
import { composeStages, type Stages } from '../../src/app/compose-stages';
import { ScriptedBrain } from '../fakes/fake-brain';
import { RecordingSender } from '../fakes/recording-sender';
import { seedSample } from '../handlers/tool-context';
import type { TestDatabase } from './db';

export interface TestPipeline extends Stages {
  brain: ScriptedBrain;
  sender: RecordingSender;
  queue: WorkQueue;
  /** Stores the message as the adapters do and claims it, as a worker would. */
  take(msg: InboundMessage): Promise<ClaimedItem>;
}

/**
 * The pipeline exactly as the service composes it, on a real database with the sample organisation, a
 * scripted brain and a recording console sender — no HTTP server, no workers, no model.
 */
export async function createTestPipeline(
  t: TestDatabase,
  env: Record<string, string> = {},
  opts: {
    /** The organisation directory cache, as the service keeps one (absent: read per turn). */
    directories?: DirectoryCache;
    /** Wraps the raw SQL runner (e.g. to watch the statements a turn sends). */
    wrapSql?: (sql: Sql) => Sql;
    /** The platform's member list of a message's room (ChatWork's, through the service's cache). */
    roomMembers?: (msg: InboundMessage) => Promise<readonly RoomMember[]>;
    /** The service's clock (absent: the real one). */
    now?: () => Date;
    /** Told when an item gives up (the service raises the work_abandoned alert from it). */
    onGaveUp?: (g: GaveUp) => void;
  } = {},
): Promise<TestPipeline> {
  await seedSample(t.db);
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', DATABASE_URL: t.url, ...env });
  const brain = new ScriptedBrain();
  const sender = new RecordingSender('console');
  const outbox = new Outbox(t.db, { reconcileDelayMs: 0 });
  outbox.register(sender);
  const pipeline = composeStages({
    config,
    db: t.db,
    sql: opts.wrapSql ? opts.wrapSql(sqlRunner(t.db)) : sqlRunner(t.db),
    directories: opts.directories,
    roomMembers: opts.roomMembers,
    logger: silentLogger(),
    metrics: createMetrics(),
    prompts: loadPrompts('soul'),
    brain,
    llmConfigured: true,
    outbox,
    chatwork: () => null,
    botNames: () => ['Hisho', 'ソウルくん'],
    now: opts.now,
  });
  const queue = new WorkQueue(t.db, {
    instanceId: 'test',
    claimTtlMs: 60_000,
    defaultMaxAttempts: 3,
    onGaveUp: opts.onGaveUp,
  });
  const intake = new Intake(queue);
  const take = async (msg: InboundMessage) => {
    await intake.accept(msg);
    const item = await queue.claim();
    if (!item) throw new Error('nothing to claim');
    return item;
  };
  return { ...pipeline, brain, sender, queue, take };
}

let seq = 0;

/** A console message from 田中太郎 (level 3, 東京営業課) in the member room, as the console adapter builds it. */
export function consoleMessage(text: string, over: Partial<InboundMessage> = {}): InboundMessage {
  seq += 1;
  return {
    platform: 'console',
    orgId: 'acme',
    roomId: 'console-general',
    senderAccountId: 'tanaka-taro',
    senderName: '田中太郎',
    text,
    rawText: text,
    mentions: [],
    platformMessageId: `console-${Date.now().toString(36)}-${seq}`,
    sentAt: new Date().toISOString(),
    ...over,
  };
}
