import fs from 'node:fs';
import path from 'node:path';
import { tempDataDir } from '../../src/db/embedded-postgres';
import { createTestDatabase } from '../helpers/db';
import { runService } from '../helpers/process';

/** Runs `npm start` until it exits (or kills it after 30 s); its stderr alone and all its output. */
const start = async (env: Record<string, string>) => {
  const p = runService(env, 30000);
  p.ready.catch(() => undefined);
  let stderr = '';
  p.child.stderr!.on('data', (d) => (stderr += String(d)));
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 30000);
  const code = await p.exited;
  clearTimeout(timer);
  return { code, stderr: stderr.trim(), output: p.output() };
};

/**
 * Issue 41: what `npm start` says when it cannot start must be the true cause in one sentence — a second start on
 * the same embedded database is "already running", not "could not start as root"; a server without SSL is named as
 * such, without pg's raw warning.
 */
describe('npm start tells the true cause', () => {
  it('a second npm start on the same data folder: Hisho is already running (PID …)', async () => {
    const dataDir = tempDataDir('hisho-second-');
    const first = runService({ PORT: '0', EMBEDDED_DATA_DIR: dataDir });
    try {
      const port = await first.ready;
      const en = await start({ PORT: '0', EMBEDDED_DATA_DIR: dataDir });
      expect(en.code).toBe(1);
      expect(en.stderr).toBe(
        `Hisho is already running (PID ${first.child.pid}) on the data folder ${dataDir}; stop it first ` +
          `(\`kill ${first.child.pid}\`), or run a second instance on a shared PostgreSQL server ` +
          '(DATABASE_URL; docs/operations.md "Two instances").',
      );
      const ja = await start({ PORT: '0', EMBEDDED_DATA_DIR: dataDir, LANG: 'ja_JP.UTF-8' });
      expect(ja.code).toBe(1);
      expect(ja.stderr).toBe(
        `Hisho はすでに起動しています（PID ${first.child.pid}、データフォルダ ${dataDir}）: 先にそちらを止める` +
          `（kill ${first.child.pid}）か、2つ目は共有の PostgreSQL（DATABASE_URL）で動かしてください` +
          '（README.ja.md「10. 2 台で動かす」）。',
      );
      expect(ja.output).not.toMatch(/as root|postmaster|FATAL/);
      // The same .env twice (the same port too): its port is taken by Hisho itself, not "by another program".
      const samePort = await start({ PORT: String(port), EMBEDDED_DATA_DIR: dataDir });
      expect([samePort.code, samePort.stderr]).toEqual([1, en.stderr]);
      // The first one is untouched.
      expect(first.child.exitCode).toBeNull();
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
      fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
    }
  }, 90000);

  it('sslmode=require against a server without SSL: says so and the two ways out, no raw pg warning', async () => {
    const t = await createTestDatabase();
    await t.close();
    const url = new URL(t.url);
    url.searchParams.set('sslmode', 'require');
    const r = await start({ DATABASE_URL: url.toString(), PORT: '0' });
    expect(r.code).toBe(1);
    const where = `${url.hostname}:${url.port}${url.pathname}`;
    expect(r.stderr).toBe(
      `Hisho could not start: the database at ${where} does not accept SSL connections, but DATABASE_URL asks for ` +
        'SSL (sslmode); remove sslmode from DATABASE_URL for a server on a trusted network, or turn SSL on in the ' +
        'server.',
    );
    expect(r.output).not.toMatch(/SECURITY WARNING|does not answer/);
  }, 60000);

  it('a full-width colon in the directory file: one Japanese sentence with the line and what to type', async () => {
    const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'hisho-slip-'));
    const sample = fs.readFileSync(path.resolve(__dirname, '..', '..', 'config', 'org.sample.yaml'), 'utf8');
    const lines = sample.split('\n');
    const at = lines.indexOf('    level: 6');
    lines[at] = '    level：6';
    const file = path.join(dir, 'org.yaml');
    fs.writeFileSync(file, lines.join('\n'));
    const t = await createTestDatabase();
    try {
      const r = await start({ DATABASE_URL: t.url, PORT: '0', ORG_DIRECTORY_FILE: file, LANG: 'ja_JP.UTF-8' });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `組織ディレクトリ ${file} の${at + 1}行目「level：6」のコロンが全角「：」のため Hisho を起動できません` +
          '（半角のコロンと空白で「level: 6」と書き直してください）。',
      );
    } finally {
      await t.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60000);
});
