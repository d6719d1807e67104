// `npx tsx scripts/measure-workers.ts`: the service as `npm start` runs it (a child process), once per WORKERS
// value, under a burst of signed ChatWork mentions: webhook acknowledgement latency while the burst is being
// answered, time until every reply reached the (loopback) ChatWork API, the service's CPU time per message
// and its RSS (idle and peak; worker threads are in the same process). The model is a zero-latency fake over
// loopback HTTP, so the SDK serialises and parses as in production. Needs DATABASE_URL (a PostgreSQL server
// where databases may be created). Sizes: MEASURE_WORKERS (e.g. "0,1,2"), MEASURE_MESSAGES (1000),
// MEASURE_CONCURRENCY (64), MEASURE_ROOMS (250), MEASURE_RATE (messages/s sent at a steady pace instead of the
// burst; 0 = burst).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { startFakeChatwork } from '../bench/fake-chatwork-server';
import { chatworkSignature } from '../src/adapters/chatwork';
import { startFakeAnthropicServer } from '../tests/fakes/anthropic-server';
import { replyCall } from '../tests/fakes/anthropic-sse';

const TOKEN = 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=';
const root = path.resolve(__dirname, '..');
const SENDERS = [1001, 1002, 1003, 1004, 1005, 1007, 1008];

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};
const cpuMs = (pid: number) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, in clock ticks of 10 ms
};

async function runOnce(workers: number, n: number, concurrency: number, rooms: number, rate: number) {
  const server = process.env.DATABASE_URL!;
  const name = `hisho_mw_${Date.now().toString(36)}`;
  const admin = new Client({ connectionString: server });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const u = new URL(server);
  u.pathname = `/${name}`;
  const llm = await startFakeAnthropicServer(() => replyCall('了解ウル！ほかに手伝うことはあるウル？'), {
    record: false,
  });
  const cw = await startFakeChatwork();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      DATABASE_URL: u.toString(),
      PORT: '0',
      WORKERS: String(workers),
      ANTHROPIC_API_KEY: 'sk-ant-measure-0123456789abcdef',
      ANTHROPIC_BASE_URL: llm.url,
      LLM_MAX_RETRIES: '0',
      LLM_DAILY_COST_LIMIT_USD: '0',
      SELF_CRITIQUE_RATE: '0',
      SENDER_TURNS_PER_MINUTE: '0',
      SENDER_TURNS_PER_DAY: '0',
      SENDER_DAILY_COST_LIMIT_USD: '0',
      NOTICES_ENABLED: 'false',
      CHATWORK_API_TOKEN: 'cw-token-measure-000',
      CHATWORK_WEBHOOK_TOKEN: TOKEN,
      CHATWORK_API_BASE_URL: cw.url,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (out += String(d)));
  const port = await new Promise<number>((resolve, reject) => {
    const until = Date.now() + 60000;
    const poll = () => {
      const m = /listening on http:\/\/localhost:(\d+)/.exec(out);
      if (m) return resolve(Number(m[1]));
      if (child.exitCode !== null || Date.now() > until) return reject(new Error(out.slice(-2000)));
      setTimeout(poll, 50);
    };
    poll();
  });
  const pid = child.pid!;
  // Warm up (worker threads compose their pipeline after the main thread listens; JIT): 50 answered mentions.
  const warm = Math.floor(Date.now() / 1000);
  for (let i = 0; i < 50; i++) {
    const raw = JSON.stringify({
      webhook_setting_id: '1',
      webhook_event_type: 'mention_to_me',
      webhook_event_time: warm,
      webhook_event: {
        from_account_id: SENDERS[i % SENDERS.length],
        to_account_id: 9999,
        room_id: 5900 + (i % 10),
        message_id: `w${i}`,
        body: `[To:9999]ソウルくん 準備${i}`,
        send_time: warm,
        update_time: 0,
      },
    });
    const res = await fetch(`http://127.0.0.1:${port}/webhooks/chatwork`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-chatworkwebhooksignature': chatworkSignature(raw, TOKEN) },
      body: raw,
    });
    await res.arrayBuffer();
  }
  const warmUntil = Date.now() + 60_000;
  while (cw.posts.length < 50 && Date.now() < warmUntil) await new Promise((r) => setTimeout(r, 20));
  cw.posts.length = 0;
  await new Promise((r) => setTimeout(r, 1000));
  const idleRss = rssMb(pid);
  let peakRss = idleRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(pid))), 50);

  const now = Math.floor(Date.now() / 1000);
  const bodies = Array.from({ length: n }, (_, i) => {
    const raw = JSON.stringify({
      webhook_setting_id: '1',
      webhook_event_type: 'mention_to_me',
      webhook_event_time: now,
      webhook_event: {
        from_account_id: SENDERS[i % SENDERS.length],
        to_account_id: 9999,
        room_id: 6000 + (i % rooms),
        message_id: `m${i}`,
        body: `[To:9999]ソウルくん 質問${i}`,
        send_time: now,
        update_time: 0,
      },
    });
    return { raw, sig: chatworkSignature(raw, TOKEN) };
  });
  const cpu0 = cpuMs(pid);
  const t0 = performance.now();
  const acks: number[] = [];
  let bad = 0;
  let next = 0;
  const send = async (b: { raw: string; sig: string }) => {
    const s = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/webhooks/chatwork`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-chatworkwebhooksignature': b.sig },
      body: b.raw,
    });
    await res.arrayBuffer();
    acks.push(performance.now() - s);
    if (res.status !== 200) bad++;
  };
  if (rate > 0) {
    // Open loop: one mention every 1/rate s whatever the answers (a steady stream, not a burst).
    const sends: Promise<void>[] = [];
    for (let i = 0; i < n; i++) {
      const due = t0 + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      sends.push(send(bodies[i]!));
    }
    await Promise.all(sends);
  } else {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n) await send(bodies[next++]!);
      }),
    );
  }
  const acceptedMs = performance.now() - t0;
  const until = Date.now() + 300_000;
  while (cw.posts.length < n - bad && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  const answeredMs = performance.now() - t0;
  const cpu = cpuMs(pid) - cpu0;
  clearInterval(sampler);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  await llm.close();
  await cw.close();
  await admin.query(`DROP DATABASE "${name}" WITH (FORCE)`).catch(() => undefined);
  await admin.end();
  return {
    workers,
    n,
    refused: bad,
    answered: cw.posts.length,
    ackP50: pct(acks, 50),
    ackP99: pct(acks, 99),
    acceptedPerS: (n / acceptedMs) * 1000,
    answeredPerS: (cw.posts.length / answeredMs) * 1000,
    cpuMsPerMessage: cpu / n,
    idleRssMb: idleRss,
    peakRssMb: peakRss,
  };
}

async function main(): Promise<void> {
  const list = (process.env.MEASURE_WORKERS ?? '0,1').split(',').map(Number);
  const n = Number(process.env.MEASURE_MESSAGES ?? 1000);
  const c = Number(process.env.MEASURE_CONCURRENCY ?? 64);
  const rooms = Number(process.env.MEASURE_ROOMS ?? 250);
  const rate = Number(process.env.MEASURE_RATE ?? 0);
  for (const w of list) {
    const r = await runOnce(w, n, c, rooms, rate);
    console.log(
      `WORKERS=${r.workers}: ${r.answered}/${r.n} answered (${r.refused} refused); ` +
        `ack p50 ${r.ackP50.toFixed(2)} ms, ` +
        `p99 ${r.ackP99.toFixed(2)} ms during the burst; accepted ${r.acceptedPerS.toFixed(0)} msg/s, ` +
        `answered ${r.answeredPerS.toFixed(1)} msg/s; service CPU ${r.cpuMsPerMessage.toFixed(2)} ms/message; ` +
        `RSS idle ${r.idleRssMb.toFixed(0)} MB, peak ${r.peakRssMb.toFixed(0)} MB`,
    );
  }
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
