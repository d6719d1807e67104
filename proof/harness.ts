/**
 * Machinery of `npm run proof`: an embedded PostgreSQL that can really be stopped and started, the
 * service as a child process (`src/main.ts`, exactly as `npm start` runs it), a steady stream of signed
 * mentions, and counting — from what the fake ChatWork API received against what the webhook
 * acknowledged, never from the service's own tables.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'pg';
import { chatworkSignature } from '../src/adapters/chatwork';
import { startEmbeddedPostgres, tempDataDir, type EmbeddedDatabase } from '../src/db/embedded-postgres';
import { childrenByParent } from '../scripts/lib/proc';
import { withDatabase } from '../scripts/lib/scratch-db';

export const WEBHOOK_TOKEN = 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=';
/** ChatWork accounts of members in the sample directory (config/org.sample.yaml). */
export const MEMBER_ACCOUNTS = [1001, 1002, 1003, 1004, 1005, 1007, 1008];

/** The bot's ChatWork account (the fake ChatWork API answers GET /me with it). */
export const BOT_ACCOUNT = 9999;
const ROOT = path.resolve(__dirname, '..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** An embedded PostgreSQL server of its own, restartable in place (same data directory, same port). */
export class ProofPostgres {
  private db: EmbeddedDatabase | null = null;
  private constructor(
    private readonly dataDir: string,
    readonly port: number,
  ) {}

  static async start(): Promise<ProofPostgres> {
    const pg = new ProofPostgres(tempDataDir('hisho-proof-'), await freePort());
    await pg.start();
    return pg;
  }

  get adminUrl(): string {
    return `postgresql://postgres:postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** Starts the server process (again); the data stays. */
  async start(): Promise<void> {
    this.db = await startEmbeddedPostgres({ dataDir: this.dataDir, persistent: true, port: this.port });
  }

  /** Stops the server process: every connection is cut, new ones are refused. */
  async stop(): Promise<void> {
    await this.db?.stop();
    this.db = null;
  }

  /**
   * Crashes the server: SIGKILL to the postmaster and every backend at once, so WAL not yet written is lost and
   * the next start recovers from what is on disk (a stop, by contrast, flushes everything first).
   */
  async kill(): Promise<void> {
    const pid = Number(fs.readFileSync(path.join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const all = [pid, ...(childrenByParent().get(pid) ?? [])];
    for (const p of all) signal(p, 'SIGKILL');
    for (let i = 0; i < 200 && all.some((p) => signal(p, 0)); i++) await sleep(25);
    this.db = null;
  }

  /** A fresh, empty database on this server. */
  async createDatabase(name: string): Promise<string> {
    const c = new Client({ connectionString: this.adminUrl });
    await c.connect();
    try {
      await c.query(`CREATE DATABASE "${name}"`);
    } finally {
      await c.end();
    }
    return withDatabase(this.adminUrl, name);
  }

  async close(): Promise<void> {
    await this.stop().catch(() => undefined);
    fs.rmSync(path.dirname(this.dataDir), { recursive: true, force: true });
  }
}

/** Runs `fn` with a client on `url`. */
export async function query<T>(url: string, sql: string): Promise<T[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows as T[];
  } finally {
    await c.end();
  }
}

export interface ServiceEnv {
  databaseUrl: string;
  port: number;
  anthropicUrl: string;
  chatworkUrl: string;
  /** Claim lifetime: how soon a killed instance's work is taken over (default 10 s). */
  claimTtlMs?: number;
  extra?: Record<string, string>;
}

/** The service as a child process, started the way `npm start` starts it. */
export class ServiceProcess {
  readonly startedAt = performance.now();
  exitCode: number | null | undefined = undefined;
  signal: NodeJS.Signals | null = null;
  readonly exited: Promise<void>;
  private output = '';

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {
    const keep = (d: Buffer) => {
      this.output = (this.output + String(d)).slice(-20000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((r) =>
      child.on('exit', (code, signal) => {
        this.exitCode = code;
        this.signal = signal;
        r();
      }),
    );
  }

  static spawn(env: ServiceEnv): ServiceProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        NODE_ENV: 'production',
        LOG_LEVEL: 'warn',
        PORT: String(env.port),
        DATABASE_URL: env.databaseUrl,
        ANTHROPIC_API_KEY: 'sk-ant-proof-0000000000000000000000',
        ANTHROPIC_BASE_URL: env.anthropicUrl,
        LLM_TIMEOUT_MS: '30000',
        LLM_DAILY_COST_LIMIT_USD: '0',
        CHATWORK_API_TOKEN: 'proof-chatwork-token',
        CHATWORK_WEBHOOK_TOKEN: WEBHOOK_TOKEN,
        CHATWORK_API_BASE_URL: env.chatworkUrl,
        WORK_CLAIM_TTL_MS: String(env.claimTtlMs ?? 10000),
        WORKER_CONCURRENCY: '8',
        // A handful of accounts stand for a whole team here: per-sender budgets would refuse most of the stream.
        SENDER_TURNS_PER_MINUTE: '0',
        SENDER_TURNS_PER_DAY: '0',
        SENDER_DAILY_COST_LIMIT_USD: '0',
        ...env.extra,
      },
    });
    return new ServiceProcess(child, env.port);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get alive(): boolean {
    return this.exitCode === undefined;
  }

  /** The last lines the process wrote (for a failure report). */
  tail(lines = 20): string {
    return this.output.split('\n').slice(-lines).join('\n');
  }

  /** Resolves when /readyz answers 200 (the database is reachable and the webhook is mounted). */
  async ready(timeoutMs = 60000): Promise<number> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      if (!this.alive)
        throw new Error(`the service exited (${this.exitCode ?? this.signal}) before it was ready:\n${this.tail()}`);
      const ok = await fetch(`${this.url}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return performance.now() - this.startedAt;
      if (Date.now() > until) throw new Error(`the service was not ready within ${timeoutMs} ms:\n${this.tail()}`);
      await sleep(25);
    }
  }

  /** SIGKILL: no shutdown, no release of claims — a crash. */
  async kill(): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM and wait (graceful stop). */
  async stop(): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.exited,
      new Promise((r) => {
        timer = setTimeout(r, 15000);
      }),
    ]);
    clearTimeout(timer);
    await this.kill();
  }
}

let seq = 0;

/** A signed mention_to_me delivery as ChatWork sends it. */
export function mention(opts: { room: number; from: number; text: string; messageId?: string }): {
  raw: string;
  signature: string;
  messageId: string;
} {
  const now = Math.floor(Date.now() / 1000);
  const messageId = opts.messageId ?? `p${process.pid}x${++seq}`;
  const raw = JSON.stringify({
    webhook_setting_id: '1',
    webhook_event_type: 'mention_to_me',
    webhook_event_time: now,
    webhook_event: {
      from_account_id: opts.from,
      to_account_id: BOT_ACCOUNT,
      room_id: opts.room,
      message_id: messageId,
      body: `[To:${BOT_ACCOUNT}]Hishoさん\n${opts.text}`,
      send_time: now,
      update_time: 0,
    },
  });
  return { raw, signature: chatworkSignature(raw, WEBHOOK_TOKEN), messageId };
}

/** What became of one delivery: the webhook's status, or `refused` when no HTTP answer came. */
export type Delivery = number | 'refused';

/**
 * POSTs one webhook on a connection of its own (as a webhook sender does: no pooled keep-alive socket
 * that the server may already be closing), and reports the status, or `refused` with the reason.
 */
export function deliver(
  url: string,
  d: { raw: string | Buffer; signature?: string },
  timeoutMs = 10000,
): Promise<{ status: Delivery; body: string; error?: string }> {
  const body = typeof d.raw === 'string' ? Buffer.from(d.raw) : d.raw;
  return new Promise((resolve) => {
    const req = http.request(
      `${url}/webhooks/chatwork`,
      {
        method: 'POST',
        agent: false,
        timeout: timeoutMs,
        headers: {
          'content-type': 'application/json',
          'content-length': body.length,
          'user-agent': 'ChatWork-Webhook/1.0.0',
          connection: 'close',
          ...(d.signature !== undefined ? { 'x-chatworkwebhooksignature': d.signature } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (err) => resolve({ status: res.statusCode ?? 0, body: '', error: err.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve({ status: 'refused', body: '', error: err.code ?? err.message }),
    );
    req.end(body);
  });
}

/**
 * A steady stream of mentions (`rate` per second) over `conversations` room+sender pairs, to whatever
 * URL `target()` gives at the time of sending. Records every delivery's outcome by message id.
 */
export class MentionStream {
  readonly outcomes = new Map<string, Delivery>();
  /** When each answer came back (performance.now()), in order. */
  readonly answers: { at: number; status: Delivery }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private n = 0;

  constructor(
    private readonly o: { target: () => string; rate: number; conversations?: number; text?: (n: number) => string },
  ) {}

  start(): void {
    const every = 1000 / this.o.rate;
    const t0 = performance.now();
    const tick = () => {
      // Catch up on missed ticks so the rate holds even when the event loop is busy.
      while (this.n < (performance.now() - t0) / every) this.sendOne();
      this.timer = setTimeout(tick, Math.max(1, every / 2));
    };
    tick();
  }

  private sendOne(): void {
    const i = this.n++;
    const conv = i % (this.o.conversations ?? 20);
    // Members of the sample directory: in its room 5001, and in rooms the directory does not list (where
    // members work as usual; senders the directory does not know would only get the stranger reply).
    const d = mention({
      room: conv < 4 ? 5001 : 7000 + conv,
      from: MEMBER_ACCOUNTS[conv % MEMBER_ACCOUNTS.length]!,
      text: this.o.text?.(i) ?? `進捗の確認をお願いします（${i}）`,
    });
    this.outcomes.set(d.messageId, 'refused');
    const p = deliver(this.o.target(), { raw: d.raw, signature: d.signature }).then((r) => {
      this.outcomes.set(d.messageId, r.status);
      this.answers.push({ at: performance.now(), status: r.status });
    });
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await Promise.all([...this.inFlight]);
  }
}

/** The message id a reply answers, from its reply tag `[rp aid=… to=room-message]`. */
export function repliedTo(body: string): string | null {
  return /^\[rp aid=\d+ to=\d+-([^\]]+)\]/.exec(body)?.[1] ?? null;
}

/** `room-message` of the message a reply answers (message ids are unique per room only). */
export function replyKey(body: string): string | null {
  return /^\[rp aid=\d+ to=(\d+-[^\]]+)\]/.exec(body)?.[1] ?? null;
}

export interface Tally {
  sent: number;
  acknowledged: number;
  /** No 200 (connection refused, reset, 5xx): ChatWork would not retry these. */
  refused: number;
  /** Acknowledged but never answered. */
  lost: number;
  /** Answered more than once. */
  doubled: number;
  /** Answered with an apology instead of the model's answer. */
  apologies: number;
  /** Not acknowledged, yet answered (stored before the connection broke). */
  answeredUnacknowledged: number;
  /** Message ids lost / doubled (for the report). */
  lostIds: string[];
  doubledIds: string[];
}

/** Compares the webhook's acknowledgements with the replies the fake ChatWork API received. */
export function tally(outcomes: Map<string, Delivery>, posts: { body: string }[], answerMarker: string): Tally {
  const answers = new Map<string, string[]>();
  for (const p of posts) {
    const id = repliedTo(p.body);
    if (id) answers.set(id, [...(answers.get(id) ?? []), p.body]);
  }
  const acked = [...outcomes].filter(([, s]) => s === 200).map(([id]) => id);
  const lostIds = acked.filter((id) => !answers.has(id));
  const doubledIds = [...answers].filter(([id, b]) => outcomes.has(id) && b.length > 1).map(([id]) => id);
  return {
    sent: outcomes.size,
    acknowledged: acked.length,
    refused: outcomes.size - acked.length,
    lost: lostIds.length,
    doubled: doubledIds.length,
    apologies: [...answers].filter(([id, b]) => outcomes.has(id) && b.some((x) => !x.includes(answerMarker))).length,
    answeredUnacknowledged: [...outcomes].filter(([id, s]) => s !== 200 && answers.has(id)).length,
    lostIds,
    doubledIds,
  };
}

/**
 * Waits until every acknowledged message has an answer, then for a quiet spell with no new post (a
 * late duplicate would show up), or until `timeoutMs`.
 */
export async function settle(
  outcomes: Map<string, Delivery>,
  posts: { body: string }[],
  o: { timeoutMs: number; quietMs: number },
): Promise<void> {
  const until = Date.now() + o.timeoutMs;
  let lastCount = -1;
  let quietSince = Date.now();
  while (Date.now() < until) {
    if (posts.length !== lastCount) {
      lastCount = posts.length;
      quietSince = Date.now();
    }
    const answered = new Set(posts.map((p) => repliedTo(p.body)));
    const pending = [...outcomes].some(([id, s]) => s === 200 && !answered.has(id));
    if (!pending && Date.now() - quietSince >= o.quietMs) return;
    await sleep(100);
  }
}

/** Sends `sig` to a process; false when it does not exist (signal 0 only asks). */
function signal(pid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}
