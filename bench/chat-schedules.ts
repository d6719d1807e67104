// `npm run bench:schedules` (issue 31): how long one firing period takes for N chat-made schedules due at the
// same minute (default 1,000). The service runs as `npm start` runs it (the compiled dist/, a child process,
// default settings: a 15 s sweep) on a fresh database, against a loopback fake model and fake ChatWork API
// (ChatWork's 10 posts per 10 s per room holds, so the schedules are spread over rooms, 4 per room). Each
// schedule is a daily reminder of one of the sample directory's members at the coming minute. The bench waits
// until every reminder has been posted, then checks each was posted once, and reports how late the first and
// the last post were after the minute. Results: printed, and bench/results/chat-schedules-<date>.json.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { zonedParts } from '../src/core/zoned-time';
import { startEmbeddedPostgres, tempDataDir } from '../src/db/embedded-postgres';
import { createDb } from '../src/db/prisma';
import { createChatSchedule } from '../src/scheduler/schedule-store';
import { startFakeAnthropicServer } from '../tests/fakes/anthropic-server';
import { replyCall } from '../tests/fakes/anthropic-sse';
import { startFakeChatwork } from './fake-chatwork-server';

const root = path.resolve(__dirname, '..');
const N = Number(process.env.BENCH_SCHEDULES ?? 1000);
const PER_ROOM = 4;
const MEMBERS = ['yamada-ichiro', 'sato-misaki', 'suzuki-kenji', 'tanaka-taro', 'tanaka-hanako', 'ito-yui'];

function start(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(root, 'scripts', 'start.js')], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += String(d);
      if (/listening on http:\/\/localhost:\d+/.test(out)) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d) => process.stderr.write(`[service] ${String(d)}`));
    child.once('exit', (code) => reject(new Error(`the service exited (${code}): ${out.slice(-2000)}`)));
  });
}

async function main(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { ensureBuilt } = require('../scripts/dist') as { ensureBuilt(): void };
  ensureBuilt();
  let serverUrl = process.env.DATABASE_URL;
  let embeddedStop: (() => Promise<void>) | null = null;
  if (!serverUrl) {
    const emb = await startEmbeddedPostgres({ dataDir: tempDataDir('hisho-bench-'), persistent: false });
    serverUrl = emb.url;
    embeddedStop = emb.stop;
  }
  const dbName = `hisho_bench_sched_${Date.now().toString(36)}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${dbName}"`);
  const dbUrl = new URL(serverUrl);
  dbUrl.pathname = `/${dbName}`;
  // The sample directory without quiet hours (the bench may run at any hour), with the bench's rooms.
  const rooms = Math.ceil(N / PER_ROOM);
  let directory = fs
    .readFileSync(path.join(root, 'config', 'org.sample.yaml'), 'utf8')
    .replace(/^ {2}quiet_hours:.*\n/m, '');
  const roomLines = Array.from(
    { length: rooms },
    (_, i) => `  - { platform: chatwork, id: "${7000 + i}", name: 定期${i}, authority: member }\n`,
  ).join('');
  directory = directory.replace(/^rooms:\n/m, `rooms:\n${roomLines}`);
  const dirFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-bench-dir-')), 'org.yaml');
  fs.writeFileSync(dirFile, directory);

  const llm = await startFakeAnthropicServer(() => replyCall('リマインドの時間ウル！忘れずにお願いするウル🐺'), {
    record: false,
  });
  const cw = await startFakeChatwork({ botAccountId: 9999 });
  const child = await start({
    NODE_ENV: 'production',
    PORT: '0',
    LOG_LEVEL: 'warn',
    DATABASE_URL: dbUrl.toString(),
    ORG_DIRECTORY_FILE: dirFile,
    ANTHROPIC_API_KEY: 'sk-bench-not-a-real-key-000000',
    ANTHROPIC_BASE_URL: llm.url,
    CHATWORK_API_TOKEN: 'bench-token',
    CHATWORK_WEBHOOK_TOKEN: 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=',
    CHATWORK_API_BASE_URL: cw.url,
    LLM_DAILY_COST_LIMIT_USD: '0',
  });
  const db = createDb({ url: dbUrl.toString(), poolMax: 4 });
  try {
    // The minute the schedules are due: at least 40 s away, so every row is in before it comes.
    const minute = new Date(Math.ceil((Date.now() + 40_000) / 60_000) * 60_000);
    const p = zonedParts(minute, 'Asia/Tokyo');
    const time = `${String(p.hh).padStart(2, '0')}:${String(p.mm).padStart(2, '0')}`;
    for (let i = 0; i < N; i++) {
      const who = MEMBERS[i % MEMBERS.length]!;
      await createChatSchedule(db, {
        orgId: 'acme',
        kind: 'reminder',
        ownerMemberId: who,
        targetMemberId: who,
        departmentId: null,
        platform: 'chatwork',
        roomId: String(7000 + Math.floor(i / PER_ROOM)),
        text: `定期の確認 ${i}`,
        rule: { freq: 'daily', time, holiday: 'ignore' },
        timezone: 'Asia/Tokyo',
        catchUp: 'once',
        quietPolicy: 'deliver',
        nextRunAt: minute,
        idempotencyKey: null,
      });
    }
    console.log(`${N} chat schedules due at ${minute.toISOString()} (${time} Tokyo) over ${rooms} rooms`);
    const until = minute.getTime() + 10 * 60_000;
    const benchRooms = () => cw.posts.filter((x) => Number(x.roomId) >= 7000);
    while (benchRooms().length < N && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 20_000)); // anything more (a duplicate) would arrive now
    const posts = benchRooms();
    const at = posts.map((x) => performance.timeOrigin + x.at - minute.getTime()).sort((a, b) => a - b);
    const runs = await db.scheduleRun.count({ where: { scheduleId: { startsWith: 'chat:' } } });
    const sent = await db.reminder.count({ where: { scheduleId: { not: null }, status: 'sent' } });
    const perRoom = new Map<string, number>();
    for (const x of posts) perRoom.set(x.roomId, (perRoom.get(x.roomId) ?? 0) + 1);
    const result = {
      date: new Date().toISOString(),
      schedules: N,
      rooms,
      periodRows: runs,
      remindersSent: sent,
      posts: posts.length,
      roomsWithMoreThan4: [...perRoom.values()].filter((n) => n > PER_ROOM).length,
      firstPostMs: at[0] ?? null,
      p50PostMs: at[Math.floor(at.length / 2)] ?? null,
      lastPostMs: at.at(-1) ?? null,
      sweepMs: 15000,
    };
    console.log(JSON.stringify(result, null, 2));
    fs.mkdirSync(path.join(root, 'bench', 'results'), { recursive: true });
    const file = path.join(root, 'bench', 'results', `chat-schedules-${result.date.slice(0, 10)}.json`);
    fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`written to ${path.relative(root, file)}`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await db.$disconnect();
    await llm.close();
    await cw.close();
    await admin.query(`DROP DATABASE "${dbName}" WITH (FORCE)`);
    await admin.end();
    await embeddedStop?.();
    fs.rmSync(path.dirname(dirFile), { recursive: true, force: true });
  }
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
