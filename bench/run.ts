// `npm run bench`: pipeline overhead, webhook acknowledgement latency, throughput, memory and the
// cacheable prompt prefix — with real PostgreSQL and a zero-latency fake model (SPEC §5).
import { Client } from 'pg';
import { chatworkSignature } from '../src/adapters/chatwork';
import { loadConfig } from '../src/config/env';
import { startEmbeddedPostgres, tempDataDir } from '../src/db/embedded-postgres';
import { silentLogger } from '../src/observability/logger';
import { startService, type Service } from '../src/service';
import { startFakeChatwork } from './fake-chatwork-server';
import { ZeroLatencyLlm } from './fake-llm';

const TOKEN = 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=';
const N = Number(process.env.BENCH_TURNS ?? 1000);
const ACKS = Number(process.env.BENCH_ACKS ?? 1000);
const LOAD = Number(process.env.BENCH_LOAD ?? 3000);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}
const f = (n: number) => n.toFixed(2);

let seq = 1;
function delivery(room: number, from: number, body: string): { raw: string; sig: string } {
  const now = Math.floor(Date.now() / 1000);
  const raw = JSON.stringify({ webhook_setting_id: '1', webhook_event_type: 'mention_to_me', webhook_event_time: now,
    webhook_event: { from_account_id: from, to_account_id: 9999, room_id: room, message_id: `b${process.pid}-${seq++}`, body: `[To:9999]${body}`, send_time: now, update_time: 0 } });
  return { raw, sig: chatworkSignature(raw, TOKEN) };
}

async function post(url: string, d: { raw: string; sig: string }): Promise<number> {
  const res = await fetch(`${url}/webhooks/chatwork`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-chatworkwebhooksignature': d.sig }, body: d.raw });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`webhook answered ${res.status}`);
  return res.status;
}

async function waitPosts(posts: unknown[], n: number, ms = 60000): Promise<void> {
  const until = Date.now() + ms;
  while (posts.length < n) {
    if (Date.now() > until) throw new Error(`only ${posts.length}/${n} replies arrived`);
    await new Promise((r) => setImmediate(r));
  }
}

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

  const cw = await startFakeChatwork();
  const llm = new ZeroLatencyLlm();
  const config = loadConfig({
    NODE_ENV: 'production', PORT: '0', LOG_LEVEL: 'silent', DATABASE_URL: u.toString(), ANTHROPIC_API_KEY: 'sk-bench-not-a-real-key-000000',
    CHATWORK_API_TOKEN: 'bench-token', CHATWORK_WEBHOOK_TOKEN: TOKEN, CHATWORK_API_BASE_URL: cw.url, LLM_DAILY_COST_LIMIT_USD: '0',
    WORKER_CONCURRENCY: process.env.BENCH_WORKERS ?? '16', DATABASE_POOL_MAX: '20',
  });
  const started = performance.now();
  const svc: Service = await startService(config, { llm, logger: silentLogger(), workerPollMs: 100 });
  const url = `http://127.0.0.1:${svc.port}`;
  console.log(`service start-up (fresh database, migrations + sample directory): ${Math.round(performance.now() - started)} ms`);

  // Warm-up.
  for (let i = 0; i < 50; i++) { await post(url, delivery(7000 + i, 1004, 'こんにちは')); }
  await waitPosts(cw.posts, 50);

  // 1. Sequential turns: end-to-end overhead (webhook in → reply posted), LLM time is zero.
  for (const kind of ['conversational', 'one-tool'] as const) {
    const lat: number[] = [];
    for (let i = 0; i < N; i++) {
      const before = cw.posts.length;
      const t0 = performance.now();
      await post(url, delivery(10000 + i + (kind === 'one-tool' ? 50000 : 0), 1004, kind === 'one-tool' ? '田中太郎さんに資料作成のタスクをお願い、期限は明日' : 'こんにちは'));
      await waitPosts(cw.posts, before + 1);
      lat.push(cw.posts[before]!.at - t0);
    }
    console.log(`pipeline overhead, ${kind} turn (webhook → reply posted, n=${N}): p50 ${f(pct(lat, 50))} ms, p99 ${f(pct(lat, 99))} ms`);
  }
  const turnRows = await svc.db.$queryRaw<{ kind: string; p50: number; p99: number; n: bigint }[]>`
    SELECT CASE WHEN decision = 'EXECUTED' THEN 'one-tool' ELSE 'conversational' END AS kind,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY "totalMs" - "llmMs") AS p50,
           percentile_cont(0.99) WITHIN GROUP (ORDER BY "totalMs" - "llmMs") AS p99, count(*) AS n
    FROM turn_records GROUP BY 1 ORDER BY 1`;
  for (const r of turnRows) console.log(`  in-worker turn time minus LLM time, ${r.kind} (n=${r.n}): p50 ${f(Number(r.p50))} ms, p99 ${f(Number(r.p99))} ms`);

  // 2. Webhook acknowledgement latency (client-side), workers running.
  const acks: number[] = [];
  const ackBase = cw.posts.length;
  for (let i = 0; i < ACKS; i++) {
    const d = delivery(200000 + i, 1004, 'こんにちは');
    const t0 = performance.now();
    await post(url, d);
    acks.push(performance.now() - t0);
  }
  console.log(`webhook acknowledgement (n=${ACKS}, sequential): p50 ${f(pct(acks, 50))} ms, p99 ${f(pct(acks, 99))} ms`);
  await waitPosts(cw.posts, ackBase + ACKS, 120000);

  // 3. Sustained throughput: LOAD messages from distinct rooms, 64 concurrent senders.
  let rss = process.memoryUsage().rss;
  const sampler = setInterval(() => { rss = Math.max(rss, process.memoryUsage().rss); }, 50);
  const loadBase = cw.posts.length;
  const t0 = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (next < LOAD) {
      const i = next++;
      await post(url, delivery(400000 + i, 1004, i % 5 === 0 ? '田中太郎さんに資料作成のタスクをお願い、期限は明日' : 'こんにちは'));
    }
  }));
  const accepted = performance.now() - t0;
  await waitPosts(cw.posts, loadBase + LOAD, 300000);
  const total = performance.now() - t0;
  clearInterval(sampler);
  console.log(`throughput (n=${LOAD}, 20% one-tool turns): accepted ${f(LOAD / (accepted / 1000))} msg/s, fully answered ${f(LOAD / (total / 1000))} msg/s`);
  console.log(`peak RSS during load: ${(rss / 1024 / 1024).toFixed(0)} MB`);

  // 4. Prompt: the cacheable prefix (tools + stable system) is identical across turns and its share of the input.
  const req = llm.lastRequest!;
  const prefixChars = JSON.stringify(req.tools).length + req.system[0]!.text.length;
  const totalChars = prefixChars + req.system.slice(1).reduce((a, b) => a + b.text.length, 0) + JSON.stringify(req.messages).length;
  console.log(`cacheable prefix share of a typical request: ${((prefixChars / totalChars) * 100).toFixed(1)}% of input characters (tools ${req.tools.length})`);

  await svc.stop();
  await cw.close();
  await admin.query(`DROP DATABASE "${dbName}" WITH (FORCE)`);
  await admin.end();
  if (embeddedStop) await embeddedStop();
}

main().catch((err) => { console.error(err); process.exit(1); });
