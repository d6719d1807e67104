/**
 * /admin with 100,000 turns (issue 32): seeds a fresh database (turns over 30 days, one LLM call each, some
 * pending actions), then times each page's queries (median of 5 after one warm-up) and prints the plans of
 * the audit log's and the overview's statements (EXPLAIN ANALYZE). Writes bench/results/admin-pages.txt.
 *   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres npx tsx bench/admin-pages.ts
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { applyMigrations } from '../src/db/migrate';
import { createDatabase } from '../src/db/prisma';
import { sqlRunner } from '../src/db/sql';
import {
  auditLog,
  constitutionAudits,
  overview,
  pendingConfirmations,
  scopeView,
  turnDetail,
} from '../src/server/admin/admin-queries';

const TURNS = Number(process.env.ADMIN_BENCH_TURNS ?? 100_000);
const TZ = 'Asia/Tokyo';

async function main(): Promise<void> {
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('DATABASE_URL is not set');
  const name = `hisho_admin_bench_${process.pid}`;
  const admin = new Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = base.replace(/\/[^/]*$/, `/${name}`);
  const out: string[] = [];
  const say = (s: string) => {
    console.log(s);
    out.push(s);
  };
  try {
    await applyMigrations(url);
    const { db, pool } = createDatabase({ url });
    const sql = sqlRunner(db, pool);
    const t0 = Date.now();
    await pool.query(
      `INSERT INTO organizations (id, name, "updatedAt") VALUES ('acme', 'ACME', now()) ON CONFLICT DO NOTHING`,
    );
    await pool.query(
      `INSERT INTO members (id, "orgId", name, level, "updatedAt")
       SELECT 'm' || i, 'acme', '社員' || i, 2, now() FROM generate_series(1, 200) i
       ON CONFLICT DO NOTHING`,
    );
    await pool.query(
      `INSERT INTO turn_records (id, "orgId", platform, "roomId", "accountId", "memberId", kind, "inputRedacted",
         reasoning, confidence, proposals, decision, "reasonCode", "finalDecider", "totalMs", "costUsd", "finalReply",
         "createdAt")
       SELECT 't' || i, 'acme', 'chatwork', 'r' || (i % 50), 'a' || (i % 200), 'm' || (1 + i % 200),
              CASE WHEN i % 10 = 0 THEN 'notification' ELSE 'user_request' END, '依頼 ' || i,
              '{"intent_understanding": "タスクを登録したいという依頼で、担当者と期限が書かれている"}'::jsonb,
              '{"overall": 0.8}'::jsonb, '[]'::jsonb,
              (ARRAY['REPLY','EXECUTED','CONFIRM','BLOCK','DENIED'])[1 + i % 5],
              (ARRAY['B_TEXT_RESPONSE','T_EXECUTED','G_CONFIDENCE_MEDIUM','G_CONFIDENTIAL',
                     'Z_LEVEL_TOO_LOW'])[1 + i % 5],
              'LLM', 100 + i % 900, 0.004, '返答 ' || i,
              now() - (i * interval '26 seconds')
       FROM generate_series(1, $1::int) i`,
      [TURNS],
    );
    await pool.query(
      `INSERT INTO llm_usage ("turnId", "orgId", model, purpose, "inputTokens", "outputTokens", "cacheWriteTokens",
         "cacheReadTokens", "costUsd", "durationMs", "createdAt")
       SELECT 't' || i, 'acme', 'claude-opus-5-5', 'turn', 900, 120, 0, 2400, 0.004, 300,
              now() - (i * interval '26 seconds')
       FROM generate_series(1, $1::int) i`,
      [TURNS],
    );
    await pool.query('ANALYZE');
    say(
      `seeded ${TURNS} turns and ${TURNS} LLM calls over ${Math.round((TURNS * 26) / 86400)} days ` +
        `in ${Date.now() - t0} ms`,
    );

    const now = new Date();
    const time = async (label: string, f: () => Promise<unknown>) => {
      await f();
      const ms: number[] = [];
      for (let i = 0; i < 5; i++) {
        const s = performance.now();
        await f();
        ms.push(performance.now() - s);
      }
      ms.sort((a, b) => a - b);
      say(`${label.padEnd(34)} median ${ms[2]!.toFixed(1)} ms (min ${ms[0]!.toFixed(1)}, max ${ms[4]!.toFixed(1)})`);
    };
    await time('overview 24h', () => overview(sql, '24h', now, TZ));
    await time('overview 30d', () => overview(sql, '30d', now, TZ));
    await time('audit log (first page)', () => auditLog(db, {}, TZ));
    await time('audit log by person name', () => auditLog(db, { person: '社員17' }, TZ));
    await time('audit log by reason code', () => auditLog(db, { reason: 'Z_LEVEL_TOO_LOW' }, TZ));
    await time('audit log by room and dates', () =>
      auditLog(db, { room: 'r7', from: '2026-11-01', to: '2026-11-20' }, TZ),
    );
    await time('audit CSV (10,000 rows)', () => auditLog(db, { limit: 10_000, max: 10_000 }, TZ));
    await time('turn inspector', () => turnDetail(db, 't5000'));
    await time('member page', () => scopeView(db, sql, { memberId: 'm17' }, now, TZ));
    await time('room page', () => scopeView(db, sql, { roomId: 'r7' }, now, TZ));
    await time('pending confirmations', () => pendingConfirmations(db, now));
    await time('constitution audit (7 days)', () => constitutionAudits(sql, 7));

    const plan = async (label: string, text: string, params: unknown[]) => {
      const rows = await pool.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${text}`, params);
      say(`\nEXPLAIN ${label}:`);
      for (const r of rows.rows as { 'QUERY PLAN': string }[]) say(`  ${r['QUERY PLAN']}`);
    };
    await plan(
      'audit log by member (newest 50)',
      `SELECT id FROM turn_records WHERE "memberId" = ANY($1) ORDER BY "createdAt" DESC LIMIT 50`,
      [['m17']],
    );
    await plan(
      'audit log by reason code (newest 50)',
      `SELECT id FROM turn_records WHERE "reasonCode" LIKE 'Z_LEVEL%' ORDER BY "createdAt" DESC LIMIT 50`,
      [],
    );
    await plan(
      'overview: one hour of user turns',
      `SELECT count(*) FROM turn_records WHERE kind = 'user_request' AND "createdAt" >= $1 AND "createdAt" < $2`,
      [new Date(now.getTime() - 3_600_000), now],
    );
    await plan('turn inspector: its LLM calls', `SELECT * FROM llm_usage WHERE "turnId" = $1`, ['t5000']);
    await db.$disconnect();
    await pool.end();
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
  fs.mkdirSync(path.join(__dirname, 'results'), { recursive: true });
  fs.writeFileSync(path.join(__dirname, 'results', 'admin-pages.txt'), `${out.join('\n')}\n`);
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
