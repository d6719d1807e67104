// `npm run bench`: pipeline overhead, webhook acknowledgement latency, throughput, memory and the
// cacheable prompt prefix — with real PostgreSQL and a zero-latency fake model (SPEC §5). The load
// generator runs in a child process (bench/load.ts) so it does not share the service's CPU.
import { fork } from 'node:child_process';
import path from 'node:path';
import { Client, Pool } from 'pg';
import { SenderBudget } from '../src/brain/sender-budget';
import { loadConfig } from '../src/config/env';
import { startEmbeddedPostgres, tempDataDir } from '../src/db/embedded-postgres';
import { silentLogger } from '../src/observability/logger';
import { startService } from '../src/service';
import { ZeroLatencyLlm } from './fake-llm';

const TOKEN = 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=';
const f = (n: number) => n.toFixed(2);
type Stat = { p50: number; p99: number; n: number };

async function main(): Promise<void> {
  let serverUrl = process.env.DATABASE_URL;
  let embeddedStop: (() => Promise<void>) | null = null;
  if (!serverUrl) {
    const emb = await startEmbeddedPostgres({ dataDir: tempDataDir('hisho-bench-'), persistent: false });
    serverUrl = emb.url;
    embeddedStop = emb.stop;
  }
  const dbName = `hisho_bench_${Date.now().toString(36)}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${dbName}"`);
  const u = new URL(serverUrl);
  u.pathname = `/${dbName}`;

  const child = fork(path.join(__dirname, 'load.ts'), [], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const messages: { type: string; [k: string]: unknown }[] = [];
  const waiters: ((m: { type: string; [k: string]: unknown }) => void)[] = [];
  child.on('message', (m) => {
    const w = waiters.shift();
    if (w) w(m as never);
    else messages.push(m as never);
  });
  const next = () =>
    new Promise<{ type: string; [k: string]: unknown }>((r) => {
      const m = messages.shift();
      if (m) r(m);
      else waiters.push(r);
    });

  const cwUrl = (await next()).url as string;
  const llm = new ZeroLatencyLlm();
  const config = loadConfig({
    NODE_ENV: 'production',
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: u.toString(),
    ANTHROPIC_API_KEY: 'sk-bench-not-a-real-key-000000',
    CHATWORK_API_TOKEN: 'bench-token',
    CHATWORK_WEBHOOK_TOKEN: TOKEN,
    CHATWORK_API_BASE_URL: cwUrl,
    LLM_DAILY_COST_LIMIT_USD: '0',
    // One ChatWork account stands for all 64 senders of the load, with thousands of turns a day: per-sender
    // budgets are off here; the check itself is measured below on a realistic sender history.
    SENDER_TURNS_PER_MINUTE: '0',
    SENDER_TURNS_PER_DAY: '0',
    SENDER_DAILY_COST_LIMIT_USD: '0',
    WORKER_CONCURRENCY: process.env.BENCH_WORKERS ?? '8',
    DATABASE_POOL_MAX: '20',
  });
  const started = performance.now();
  const svc = await startService(config, { llm, logger: silentLogger(), workerPollMs: 100 });
  console.log(
    `service start-up (fresh database: migrations + sample directory): ${Math.round(performance.now() - started)} ms`,
  );
  child.send({
    port: svc.port,
    turns: Number(process.env.BENCH_TURNS ?? 1000),
    acks: Number(process.env.BENCH_ACKS ?? 1000),
    load: Number(process.env.BENCH_LOAD ?? 3000),
  });

  let rss = 0;
  let heap = 0;
  let sampler: NodeJS.Timeout | undefined;
  let results: Record<string, unknown> = {};
  for (;;) {
    const m = await next();
    if (m.type === 'pause-workers') {
      await svc.pool.stop(5000);
      child.send('ok');
    } else if (m.type === 'resume-workers') {
      svc.pool.start();
      child.send('ok');
    } else if (m.type === 'load-start') {
      rss = process.memoryUsage().rss;
      sampler = setInterval(() => {
        const m = process.memoryUsage();
        rss = Math.max(rss, m.rss);
        heap = Math.max(heap, m.heapTotal);
      }, 50);
    } else if (m.type === 'load-end') clearInterval(sampler);
    else if (m.type === 'results') {
      results = m.results as Record<string, unknown>;
      break;
    }
  }
  for (const kind of ['conversational', 'one-tool']) {
    const s = results[kind] as Stat;
    const what = `pipeline overhead, ${kind} turn (webhook sent → reply received at the fake ChatWork API, LLM time 0`;
    console.log(`${what}, n=${s.n}): p50 ${f(s.p50)} ms, p99 ${f(s.p99)} ms`);
  }
  const turnRows = await svc.db.$queryRaw<{ kind: string; p50: number; p99: number; n: bigint }[]>`
    SELECT CASE WHEN decision = 'EXECUTED' THEN 'one-tool' ELSE 'conversational' END AS kind,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY "totalMs" - "llmMs") AS p50,
           percentile_cont(0.99) WITHIN GROUP (ORDER BY "totalMs" - "llmMs") AS p99, count(*) AS n
    FROM turn_records GROUP BY 1 ORDER BY 1`;
  for (const r of turnRows) {
    const what = `  in-worker turn time (claim → reply sent, all phases incl. load), ${r.kind} (n=${r.n})`;
    console.log(`${what}: p50 ${f(Number(r.p50))} ms, p99 ${f(Number(r.p99))} ms`);
  }
  const idle = results.ackIdle as Stat;
  const busy = results.ackBusy as Stat;
  console.log(`webhook acknowledgement, workers paused (n=${idle.n}): p50 ${f(idle.p50)} ms, p99 ${f(idle.p99)} ms`);
  const busyWhat = `webhook acknowledgement, workers answering in the same process (n=${busy.n})`;
  console.log(`${busyWhat}: p50 ${f(busy.p50)} ms, p99 ${f(busy.p99)} ms`);
  const load = results.load as { n: number; acceptedPerS: number; answeredPerS: number };
  const rates = `accepted ${f(load.acceptedPerS)} msg/s, fully answered ${f(load.answeredPerS)} msg/s`;
  console.log(`throughput (n=${load.n}, 64 concurrent senders, 20% one-tool turns): ${rates}`);
  const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
  console.log(
    `service process peak RSS during the load: ${mb(rss)} MB (peak V8 heap ${mb(heap)} MB; the process runs under tsx)`,
  );

  const req = llm.lastRequest!;
  const prefixChars = JSON.stringify(req.tools).length + req.system[0]!.text.length;
  const totalChars =
    prefixChars + req.system.slice(1).reduce((a, b) => a + b.text.length, 0) + JSON.stringify(req.messages).length;
  const share = ((prefixChars / totalChars) * 100).toFixed(1);
  const prefix = 'cacheable prefix (tools + stable system) share of a typical request';
  console.log(`${prefix}: ${share}% of input characters (${req.tools.length} tools)`);

  await benchSenderBudget(u.toString());

  await svc.stop();
  await admin.query(`DROP DATABASE "${dbName}" WITH (FORCE)`);
  await admin.end();
  if (embeddedStop) await embeddedStop();
}

/**
 * The per-sender budget check (one statement per turn) for a sender at the default daily limit: 400 turn
 * records today, 20 of them in the last minute.
 */
async function benchSenderBudget(url: string): Promise<void> {
  const pool = new Pool({ connectionString: url, max: 2 });
  try {
    await pool.query(`INSERT INTO turn_records
        (id, platform, "roomId", "accountId", decision, "reasonCode", "finalDecider", "totalMs", "costUsd", "createdAt")
      SELECT 'budget-' || g, 'chatwork', '5001', 'budget-sender', 'REPLY', 'B_TEXT_RESPONSE', 'LLM', 10, 0.004,
             now() - (CASE WHEN g <= 20 THEN g ELSE 60 + g * 30 END) * interval '1 second'
      FROM generate_series(1, 400) g`);
    const budget = new SenderBudget({
      sql: async (text, params) => (await pool.query(text, params)).rows,
      timezone: 'Asia/Tokyo',
      limits: { turnsPerMinute: 20, turnsPerDay: 400, dailyCostUsd: 10 },
    });
    const ms: number[] = [];
    for (let i = 0; i < 500; i++) {
      const t0 = performance.now();
      await budget.check({ platform: 'chatwork', senderAccountId: 'budget-sender' });
      ms.push(performance.now() - t0);
    }
    ms.sort((a, b) => a - b);
    const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!;
    const what = 'per-sender budget check (sender with 400 turns today, 20 in the last minute; n=500)';
    console.log(`${what}: p50 ${f(at(0.5))} ms, p99 ${f(at(0.99))} ms`);
  } finally {
    await pool.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
