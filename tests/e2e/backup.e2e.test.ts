import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { SAMPLE_DIRECTORY } from '../../src/service';
import { backupDatabase, restoreDatabase } from '../../src/db/backup';
import { tempDataDir } from '../../src/db/embedded-postgres';
import { importDirectoryFile } from '../../src/org/import-directory';
import { consoleSay } from '../helpers/console';
import { createTestDatabase } from '../helpers/db';
import { runService } from '../helpers/process';
import { waitFor } from '../helpers/service';

const root = path.resolve(__dirname, '..', '..');
const npm = spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim();

/** Every table's rows as PostgreSQL's JSON text, ordered: what a restore must give back exactly. */
async function snapshot(url: string): Promise<Record<string, string[]>> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const tables = await c.query<{ t: string }>(
      `SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'`,
    );
    const out: Record<string, string[]> = {};
    for (const { t } of tables.rows) {
      const rows = await c.query<{ j: string }>(`SELECT row_to_json(x)::text AS j FROM "${t}" x`);
      out[t] = rows.rows.map((r) => r.j).sort();
    }
    return out;
  } finally {
    await c.end();
  }
}

/**
 * Issue 41: `npm run backup` and `npm run restore` keep everything Hisho holds, for the embedded database (whose
 * PostgreSQL 18 no system pg_dump can read) and an external one alike.
 */
describe('backup and restore', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-backup-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a restore gives back every row exactly — ids, times, JSON, Japanese — and new rows get new ids', async () => {
    const t = await createTestDatabase();
    try {
      await importDirectoryFile(t.db, SAMPLE_DIRECTORY);
      await t.db.llmUsage.createMany({
        data: [1, 2, 3].map((i) => ({
          model: 'claude-opus-5-5',
          inputTokens: i,
          outputTokens: 1,
          cacheWriteTokens: 0,
          cacheReadTokens: 0,
          costUsd: '0.001234',
          durationMs: 10,
          createdAt: new Date(`2026-11-2${i}T01:02:03.456Z`),
        })),
      });
      const before = await snapshot(t.url);
      const file = path.join(dir, 'one.jsonl.gz');
      const counts = await backupDatabase(t.url, file);
      expect(counts.llm_usage).toBe(3);
      expect(counts.members).toBe(8);

      // Everything goes (a wrong import, a broken disk), then comes back.
      await t.db.organization.deleteMany();
      await t.db.llmUsage.deleteMany();
      await restoreDatabase(t.url, file);
      expect(await snapshot(t.url)).toEqual(before);
      const next = await t.db.llmUsage.create({
        data: {
          model: 'm',
          inputTokens: 1,
          outputTokens: 1,
          cacheWriteTokens: 0,
          cacheReadTokens: 0,
          costUsd: 0,
          durationMs: 1,
        },
      });
      const max = (await t.db.llmUsage.findMany()).map((r) => r.id).filter((id) => id !== next.id);
      expect(max.every((id) => next.id > id)).toBe(true);
    } finally {
      await t.close();
    }
  }, 60000);

  it('npm run backup while Hisho runs on the embedded database, npm run restore after it stopped', async () => {
    const dataDir = tempDataDir('hisho-backup-embedded-');
    const env = { PORT: '0', EMBEDDED_DATA_DIR: dataDir };
    const npmRun = (args: string[], extra: Record<string, string> = {}) =>
      spawnSync(npm, ['run', '--silent', ...args], {
        cwd: root,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, ...extra },
        timeout: 60000,
      });
    const p = runService(env);
    const file = path.join(dir, 'embedded.jsonl.gz');
    try {
      const port = await p.ready;
      // A conversation to keep (no model key: the bot answers with a setup reply, recorded all the same).
      expect(
        (await consoleSay({ url: `http://127.0.0.1:${port}` }, 'tanaka-taro', 'console-general', '覚えてて')).ok,
      ).toBe(true);
      const turns = async () => {
        // postmaster.pid: the server's PID, its data folder, start time, port …
        const pgPort = fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[3];
        const c = new Client({ connectionString: `postgresql://postgres:postgres@127.0.0.1:${pgPort}/hisho` });
        await c.connect();
        const n = (await c.query<{ n: number }>('SELECT count(*)::int AS n FROM turn_records')).rows[0]!.n;
        await c.end();
        return n > 0;
      };
      await waitFor(turns, 20000, 'a recorded turn');

      const b = npmRun(['backup', '--', file]);
      expect(b.status).toBe(0);
      expect(b.stdout).toMatch(new RegExp(`^Backed up [\\d,]+ rows of \\d+ tables from ${dataDir} to ${file} \\(`));
      // A restore while it runs is refused with the reason and the one thing to do: stop it (not the start-up's
      // "or run a second instance on a shared PostgreSQL server", which it said before).
      const refused = npmRun(['restore', '--', file, '--yes']);
      expect(refused.status).toBe(1);
      expect(refused.stderr.trim()).toBe(
        `Cannot restore while Hisho runs (PID ${p.child.pid}) on the data folder ${dataDir}: stop it ` +
          `(\`kill ${p.child.pid}\`, or \`sudo systemctl stop hisho\`) and run \`npm run restore\` again.`,
      );
      const refusedJa = npmRun(['restore', '--', file, '--yes'], { LANG: 'ja_JP.UTF-8' });
      expect(refusedJa.stderr.trim()).toBe(
        `Hisho が動いているため戻せません（PID ${p.child.pid}、データフォルダ ${dataDir}）: 先に止めてから` +
          `（kill ${p.child.pid}、systemd なら sudo systemctl stop hisho）、もう一度 npm run restore を実行してください。`,
      );
    } finally {
      p.child.kill('SIGTERM');
      await p.exited;
    }
    // Without --yes and without a terminal nothing happens; with it, the data is back and the old kept.
    expect(npmRun(['restore', '--', file]).status).toBe(2);
    const r = npmRun(['restore', '--', file, '--yes'], { LANG: 'ja_JP.UTF-8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/いまの中身を .*hisho-before-restore-.*\.jsonl\.gz に保存しました。/);
    expect(r.stdout).toMatch(new RegExp(`戻しました: \\d+ 表・[\\d,]+ 行を ${dataDir} へ。npm start で起動できます。`));
    const before = /いまの中身を (.*) に保存しました/.exec(r.stdout)![1]!;
    expect(fs.existsSync(before)).toBe(true);
    fs.rmSync(before);
    fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
  }, 180000);
});
