// `npm run backup [-- FILE]` and `npm run restore -- FILE [--yes]` (issue 41): everything Hisho keeps, from its
// PostgreSQL into one file and back (src/db/backup.ts) — DATABASE_URL when set, else the embedded database under
// EMBEDDED_DATA_DIR (read from .env like `npm start`). A backup may run while Hisho runs (one consistent snapshot);
// a restore replaces the database, so it needs Hisho stopped, asks first, and saves the database as it was.
// Messages in Japanese on a Japanese terminal (LANG). Exit codes: 0 done, 1 failed, 2 usage.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline/promises';
import { Client } from 'pg';
import { checkDatabase, embeddedInUseFailure, StartupError } from '../src/app/startup-checks';
import { ConfigError, dotEnvOrigin, environment, loadConfig, type Env } from '../src/config/env';
import { terminalLanguage } from '../src/config/operator-language';
import { backupDatabase, readBackupHeader, restoreDatabase } from '../src/db/backup';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres';
import { localMinute } from '../src/core/zoned-time';
import { EmbeddedInUse } from '../src/db/postmaster-lock';

const lang = terminalLanguage();
const say = (ja: string, en: string) => (lang === 'ja' ? ja : en);

/** The database to read or write, and how to let go of it. */
interface Target {
  url: string;
  /** For people: the data folder or host:port/db (never a password). */
  where: string;
  /** The PID of a Hisho running on the embedded database, or null. */
  runningPid: number | null;
  close(): Promise<void>;
}

async function target(config: Readonly<Env>, mode: 'backup' | 'restore'): Promise<Target> {
  if (config.DATABASE_URL) {
    await checkDatabase(config.DATABASE_URL, lang);
    const u = new URL(config.DATABASE_URL);
    const where = `${u.hostname}:${u.port || '5432'}${u.pathname}`;
    return { url: config.DATABASE_URL, where, runningPid: null, close: async () => undefined };
  }
  try {
    const db = await startEmbeddedPostgres({ dataDir: config.EMBEDDED_DATA_DIR, persistent: true });
    return { url: db.url, where: db.dataDir, runningPid: null, close: () => db.stop() };
  } catch (err) {
    if (!(err instanceof EmbeddedInUse)) throw err;
    // Hisho runs on it: a backup reads through the running server (its port is in PostgreSQL's lock file).
    if (mode === 'restore' && err.hishoPid !== null) {
      // Not the start-up's "run a second instance": the one thing to do here is to stop it.
      const pid = err.hishoPid;
      throw new StartupError(
        say(
          `Hisho が動いているため戻せません（PID ${pid}、データフォルダ ${err.dataDir}）: 先に止めてから` +
            `（kill ${pid}、systemd なら sudo systemctl stop hisho）、もう一度 npm run restore を実行してください。`,
          `Cannot restore while Hisho runs (PID ${pid}) on the data folder ${err.dataDir}: stop it (\`kill ${pid}\`, ` +
            'or `sudo systemctl stop hisho`) and run `npm run restore` again.',
        ),
      );
    }
    if (mode === 'restore') throw embeddedInUseFailure(err, lang);
    const port = fs.readFileSync(path.join(err.dataDir, 'postmaster.pid'), 'utf8').split('\n')[3]?.trim();
    const url = `postgresql://postgres:postgres@127.0.0.1:${port}/hisho`;
    return { url, where: err.dataDir, runningPid: err.hishoPid, close: async () => undefined };
  }
}

const stamp = () => new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
const size = (file: string) => `${Math.max(1, Math.round(fs.statSync(file).size / 1024)).toLocaleString('en')} KB`;
const total = (counts: Record<string, number>) =>
  Object.values(counts)
    .reduce((a, b) => a + b, 0)
    .toLocaleString('en');

async function backup(config: Readonly<Env>, args: string[]): Promise<number> {
  const file = path.resolve(args[0] ?? path.join('backups', `hisho-${stamp()}.jsonl.gz`));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const t = await target(config, 'backup');
  try {
    const counts = await backupDatabase(t.url, file);
    const tables = Object.keys(counts).length;
    console.log(
      say(
        `バックアップしました: ${t.where} の ${tables} 表・${total(counts)} 行を ${file}（${size(file)}）へ。` +
          `戻すときは npm run restore -- ${file}`,
        `Backed up ${total(counts)} rows of ${tables} tables from ${t.where} to ${file} (${size(file)}); ` +
          `restore it with \`npm run restore -- ${file}\`.`,
      ),
    );
    return 0;
  } finally {
    await t.close();
  }
}

async function restore(config: Readonly<Env>, args: string[]): Promise<number> {
  const yes = args.includes('--yes');
  const fileArg = args.find((a) => a !== '--yes');
  if (!fileArg) {
    console.error(
      say('使い方: npm run restore -- バックアップのファイル [--yes]', 'Usage: npm run restore -- FILE [--yes]'),
    );
    return 2;
  }
  const file = path.resolve(fileArg);
  const header = await readBackupHeader(file).catch(() => null);
  if (!header) {
    console.error(
      say(
        `${file} は Hisho のバックアップではないため戻せません（npm run backup で作ったファイルを指定してください）。`,
        `${file} is not a Hisho backup; give a file \`npm run backup\` wrote.`,
      ),
    );
    return 1;
  }
  const t = await target(config, 'restore');
  try {
    // Every Hisho on an external database must be stopped: it would write beside the restore.
    const c = new Client({ connectionString: t.url });
    await c.connect();
    const others = await c.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    const hasData = (await c.query(`SELECT to_regclass('public._prisma_migrations') AS t`)).rows[0]?.t !== null;
    await c.end();
    if ((others.rows[0]?.n ?? 0) > 0 && !args.includes('--force')) {
      console.error(
        say(
          `${t.where} にほかの接続が ${others.rows[0]!.n} 件あるため戻せません（動いている Hisho をすべて止めてから、もう一度実行してください）。`,
          `Cannot restore: ${t.where} has ${others.rows[0]!.n} other connections; stop every running Hisho and run ` +
            'it again.',
        ),
      );
      return 1;
    }
    // When it was taken, by the clock of the people restoring it (BOT_TIMEZONE), not UTC.
    const taken = localMinute(new Date(header.createdAt), config.BOT_TIMEZONE);
    const question = say(
      `${t.where} の中身を ${file}（${taken} のバックアップ）で置き換えます。いまの中身は先に別ファイルに保存します。` +
        '続けるなら yes と入力してください: ',
      `This replaces everything in ${t.where} with ${file} (backed up ${taken}, ${config.BOT_TIMEZONE}); what is ` +
        'there now is saved to a file first. Type yes to go on: ',
    );
    if (!yes) {
      if (!process.stdin.isTTY) {
        console.error(say('確認のため --yes を付けて実行してください。', 'Run it with --yes to confirm.'));
        return 2;
      }
      const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
      const answer = (await rl.question(question)).trim().toLowerCase();
      rl.close();
      if (answer !== 'yes' && answer !== 'はい') {
        console.log(say('何も変えていません。', 'Nothing was changed.'));
        return 1;
      }
    }
    if (hasData) {
      const before = path.resolve('backups', `hisho-before-restore-${stamp()}.jsonl.gz`);
      fs.mkdirSync(path.dirname(before), { recursive: true });
      await backupDatabase(t.url, before);
      console.log(say(`いまの中身を ${before} に保存しました。`, `Saved what was there to ${before}.`));
    }
    const counts = await restoreDatabase(t.url, file);
    console.log(
      say(
        `戻しました: ${Object.keys(counts).length} 表・${total(counts)} 行を ${t.where} へ。npm start で起動できます。`,
        `Restored ${total(counts)} rows of ${Object.keys(counts).length} tables into ${t.where}; start Hisho with ` +
          '`npm start`.',
      ),
    );
    return 0;
  } finally {
    await t.close();
  }
}

async function main(): Promise<number> {
  const [mode, ...rest] = process.argv.slice(2);
  const args = rest.filter((a) => a !== '--');
  let config: Readonly<Env>;
  try {
    config = loadConfig(environment(), { origin: dotEnvOrigin(), lang });
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      return 1;
    }
    throw err;
  }
  return mode === 'restore' ? restore(config, args) : backup(config, args);
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(
      err instanceof StartupError ? err.message : say(`失敗しました: ${err.message}`, `Failed: ${err.message}`),
    );
    process.exit(1);
  },
);
