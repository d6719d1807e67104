import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ChatSender, OutboundReply, Platform } from '../adapters/types';
import type { Env } from '../config/env';
import { AppError, type ErrorCode } from '../errors/app-error';
import type { Logger } from '../observability/logger';
import type { RoomMember } from '../context/types';
import type { WakeHint } from './worker-pool';
import type { SharedIntakePressure } from './intake-pressure';

/** What the composition root drives: the in-process {@link import('./worker-pool').WorkerPool} or worker threads. */
export interface TurnPool {
  start(): void;
  /** Stops claiming, lets running turns finish within `graceMs`, releases what is left. */
  stop(graceMs?: number): Promise<void>;
  /**
   * One new item exists: one idle loop (in one worker) claims it. Given the item's ordering key, items of one
   * room (so of each of its conversations) wake the same worker, whose loops know when the item ahead of them
   * finishes.
   */
  wake(hint?: WakeHint): void;
  readonly busy: number;
}

/** What a worker thread is started with (structured-cloned). */
export interface TurnWorkerData {
  index: number;
  config: Env;
  databaseUrl: string;
  /** This worker's share of DATABASE_POOL_MAX. */
  poolMax: number;
  instanceId: string;
  /** Platforms whose senders live in the main thread (posts are relayed there): Discord and the console. */
  platforms: { platform: Platform; findPosted: boolean }[];
  /**
   * ChatWork is configured: the worker posts, looks for earlier posts and calls the tasks API with a ChatWork
   * client of its own (from `config`), so a reply's HTTP request costs the intake thread nothing.
   */
  chatwork: boolean;
  /**
   * Two or more worker threads: the worker's ChatWork client waits for each post's room turn in the main thread's
   * limiter (`paceRoom`), so the threads together keep a room under ChatWork's limit.
   */
  sharedRoomPacing?: boolean;
  botNames: string[];
  /** The bot's ChatWork account id when already known (`GET /me`); later wake-ups carry it once it is. */
  chatworkBotAccountId?: string;
  workerPollMs?: number;
  outboxReconcileDelayMs?: number;
  /** The main thread's intake pressure (webhooks in flight, its load): the worker's pool holds claims while high. */
  intakePressure?: SharedIntakePressure;
}

/** An admin alert a worker raises (the main thread stores it; same shape as `AdminAlerts.raise`). */
export type RelayedAlert = { kind: string; severity: string; facts: Record<string, unknown> };

export type RelayCall =
  | { op: 'send'; platform: Platform; reply: OutboundReply }
  | { op: 'findPosted'; platform: Platform; reply: OutboundReply; since: Date }
  | { op: 'roomMembers'; roomId: string }
  | { op: 'paceRoom'; roomId: string };

/** An error as it crosses threads: an AppError keeps what the outbox and the work queue decide on. */
export interface RelayedError {
  appError: boolean;
  code?: ErrorCode;
  message: string;
  uncertain?: boolean;
  retryable?: boolean;
  retryAfterMs?: number;
}

export type ToWorker =
  | {
      t: 'wake';
      names: string[];
      itemId?: string;
      orderingKey?: string;
      message?: unknown;
      chatworkBotAccountId?: string;
    }
  | { t: 'metrics'; id: number }
  | { t: 'stop'; graceMs: number }
  | { t: 'result'; id: number; ok: true; value: unknown }
  | { t: 'result'; id: number; ok: false; error: RelayedError };

export type FromWorker =
  | { t: 'ready' }
  | { t: 'call'; id: number; call: RelayCall }
  | { t: 'alert'; alert: RelayedAlert }
  | { t: 'database'; up: boolean; error?: string }
  | { t: 'busy'; n: number }
  | { t: 'metrics'; id: number; json: unknown[] };

export function toRelayedError(err: unknown): RelayedError {
  if (err instanceof AppError)
    return {
      appError: true,
      code: err.code,
      message: err.message,
      uncertain: err.uncertain,
      retryable: err.retryable,
      retryAfterMs: err.retryAfterMs,
    };
  return { appError: false, message: err instanceof Error ? err.message : String(err) };
}

export function fromRelayedError(e: RelayedError): Error {
  if (e.appError && e.code)
    return new AppError(e.code, e.message, {
      uncertain: e.uncertain,
      retryable: e.retryable,
      retryAfterMs: e.retryAfterMs,
    });
  return new Error(e.message);
}

export interface TurnWorkersOptions {
  count: number;
  /** Data for worker `index` (the relayed platforms are read when each worker starts). */
  data: (index: number) => TurnWorkerData;
  senders: ReadonlyMap<Platform, ChatSender>;
  /** ChatWork room members not in the directory (the main thread's client and cache). */
  roomMembers: (roomId: string) => Promise<readonly RoomMember[]>;
  /** A room's turn under the main thread's ChatWork posting limiter, for workers with `sharedRoomPacing`. */
  paceRoom?: (roomId: string) => Promise<number>;
  botNames: () => readonly string[];
  /** The bot's ChatWork account id once known: the workers' ChatWork senders recognise their own posts by it. */
  chatworkBotAccountId?: () => string | undefined;
  logger: Logger;
  onAlert: (a: RelayedAlert) => void;
  onDatabaseDown: (error: string) => void;
  onDatabaseUp: () => void;
  /** Wait before a worker that died is started again (default 1 s). */
  restartMs?: number;
}

/** The worker thread's entry (compiled: the .js next to this file; under tsx: the .ts through tsx's loader). */
function workerScript(): { file: string; eval: boolean } {
  const file = path.join(__dirname, '..', `turn-worker${path.extname(__filename)}`);
  if (file.endsWith('.js')) return { file, eval: false };
  const tsx = require.resolve('tsx/cjs/api');
  return { file: `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(file)});`, eval: true };
}

interface Slot {
  worker: Worker;
  exited: Promise<void>;
  /** It composed its pipeline and claims work (before that it holds nothing and is simply ended). */
  ready: boolean;
}

/**
 * Turns in worker threads (issue 10, seed 002 main/worker split). The main thread keeps intake (webhooks,
 * gateway events, console), the schedulers and the platform senders; each worker thread composes its own
 * pipeline, database pool and worker pool, claims work items from the same durable queue, posts to ChatWork
 * with a ChatWork client of its own, and relays its other posts (Discord, the console), room-member lookups and
 * admin alerts to the main thread. Claims, heartbeats, expiry and
 * exactly-once are the queue's and the outbox's, as with one thread: a worker that dies leaves claims that
 * expire and are taken again; it is started again after `restartMs`.
 */
export class TurnWorkers implements TurnPool {
  private readonly slots: (Slot | null)[] = [];
  private running = false;
  private next = 0;
  private readonly busyBy = new Map<number, number>();
  private scrapeId = 0;
  private readonly scrapes = new Map<number, (json: unknown[]) => void>();

  constructor(private readonly opts: TurnWorkersOptions) {}

  get busy(): number {
    let n = 0;
    for (const v of this.busyBy.values()) n += v;
    return n;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    for (let i = 0; i < this.opts.count; i++) this.spawn(i);
  }

  wake(hint?: WakeHint): void {
    const live = this.slots.filter((s): s is Slot => s !== null);
    if (live.length === 0) return;
    const at = hint?.orderingKey === undefined ? this.next++ : stringHash(roomOf(hint.orderingKey));
    const slot = live[at % live.length]!;
    const itemId = hint?.itemId?.toString();
    const chatworkBotAccountId = this.opts.chatworkBotAccountId?.();
    slot.worker.postMessage({
      t: 'wake',
      names: [...this.opts.botNames()],
      itemId,
      orderingKey: hint?.orderingKey,
      message: hint?.message,
      chatworkBotAccountId,
    } satisfies ToWorker);
  }

  /** Each ready worker's metrics (prom-client JSON), for the main thread's /metrics; a slow worker is left out. */
  async metrics(timeoutMs = 2000): Promise<unknown[][]> {
    const live = this.slots.filter((s): s is Slot => s !== null && s.ready);
    const parts = await Promise.all(
      live.map(
        (slot) =>
          new Promise<unknown[] | null>((resolve) => {
            const id = ++this.scrapeId;
            const timer = setTimeout(() => {
              this.scrapes.delete(id);
              resolve(null);
            }, timeoutMs);
            this.scrapes.set(id, (json) => {
              clearTimeout(timer);
              this.scrapes.delete(id);
              resolve(json);
            });
            slot.worker.postMessage({ t: 'metrics', id } satisfies ToWorker);
          }),
      ),
    );
    return parts.filter((p): p is unknown[] => p !== null);
  }

  async stop(graceMs = 8000): Promise<void> {
    this.running = false;
    await Promise.all(
      this.slots.map(async (slot) => {
        if (!slot) return;
        if (!slot.ready) {
          await slot.worker.terminate().catch(() => undefined);
          return;
        }
        slot.worker.postMessage({ t: 'stop', graceMs } satisfies ToWorker);
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<boolean>((r) => {
          timer = setTimeout(() => r(true), graceMs + 1500);
        });
        const timedOut = await Promise.race([slot.exited.then(() => false), late]);
        clearTimeout(timer);
        if (timedOut) await slot.worker.terminate().catch(() => undefined);
      }),
    );
  }

  private spawn(index: number): void {
    const script = workerScript();
    const worker = new Worker(script.file, { eval: script.eval, workerData: this.opts.data(index) });
    const exited = new Promise<void>((resolve) => {
      worker.on('exit', (code) => {
        this.slots[index] = null;
        this.busyBy.delete(index);
        resolve();
        if (!this.running) return;
        this.opts.logger.error({ worker: index, code }, 'turn worker stopped unexpectedly; starting it again');
        setTimeout(() => {
          if (this.running && !this.slots[index]) this.spawn(index);
        }, this.opts.restartMs ?? 1000).unref();
      });
    });
    worker.on('error', (err) => this.opts.logger.error({ worker: index, err: err.name }, 'turn worker failed'));
    worker.on('message', (m: FromWorker) => this.onMessage(index, worker, m));
    this.slots[index] = { worker, exited, ready: false };
  }

  private onMessage(index: number, worker: Worker, m: FromWorker): void {
    switch (m.t) {
      case 'call':
        this.relay(m.call).then(
          (value) => worker.postMessage({ t: 'result', id: m.id, ok: true, value } satisfies ToWorker),
          (err: unknown) =>
            worker.postMessage({ t: 'result', id: m.id, ok: false, error: toRelayedError(err) } satisfies ToWorker),
        );
        return;
      case 'alert':
        this.opts.onAlert(m.alert);
        return;
      case 'database':
        if (m.up) this.opts.onDatabaseUp();
        else this.opts.onDatabaseDown(m.error ?? 'database unavailable');
        return;
      case 'busy':
        this.busyBy.set(index, m.n);
        return;
      case 'metrics':
        this.scrapes.get(m.id)?.(m.json);
        return;
      case 'ready':
        if (this.slots[index]) this.slots[index]!.ready = true;
        this.opts.logger.debug({ worker: index }, 'turn worker ready');
        return;
    }
  }

  private async relay(c: RelayCall): Promise<unknown> {
    switch (c.op) {
      case 'send':
      case 'findPosted': {
        const sender = this.opts.senders.get(c.platform);
        if (!sender) throw new AppError('EXTERNAL_API_FAILED', `no sender for platform ${c.platform}`);
        if (c.op === 'send') return sender.send(c.reply);
        return sender.findPosted ? sender.findPosted(c.reply, c.since) : null;
      }
      case 'roomMembers':
        return this.opts.roomMembers(c.roomId);
      case 'paceRoom':
        // Without the main thread's ChatWork client there is nothing to pace against: the post goes at once.
        return this.opts.paceRoom ? this.opts.paceRoom(c.roomId) : 0;
    }
  }
}

/**
 * The room part of a conversation's ordering key (`platform:room:sender` → `platform:room`): one room's items wake
 * one worker, whose ChatWork client then sees every post to that room (its per-room posting limit).
 */
function roomOf(orderingKey: string): string {
  const cut = orderingKey.lastIndexOf(':');
  return cut > 0 ? orderingKey.slice(0, cut) : orderingKey;
}

/** A small non-negative hash of a string (FNV-1a), to send one room's wake-ups to one worker. */
function stringHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
