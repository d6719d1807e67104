import { createHash } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');
const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/**
 * A private copy of the project (a `mktemp -d` folder: mode 0700, as `/root/hisho` would be) whose
 * node_modules are hard links — the same files, reachable only through the private folder.
 */
function privateClone(): string {
  for (const base of [os.tmpdir(), path.join(root, 'data')]) {
    fs.mkdirSync(base, { recursive: true });
    const dir = fs.mkdtempSync(path.join(base, 'hisho-root-'));
    const clone = path.join(dir, 'hisho');
    fs.mkdirSync(clone);
    if (spawnSync('cp', ['-al', path.join(root, 'node_modules'), path.join(clone, 'node_modules')]).status === 0) {
      const entries = ['src', 'handlers', 'prompts', 'prisma', 'config', 'scripts', 'dist', 'package.json'];
      for (const entry of [...entries, 'tsconfig.json', 'tsconfig.build.json']) {
        // Timestamps kept: the copied dist/ (built by the test setup) is as current as the copied sources.
        fs.cpSync(path.join(root, entry), path.join(clone, entry), { recursive: true, preserveTimestamps: true });
      }
      return dir;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
  throw new Error('could not hard-link node_modules into a temporary folder');
}

/** Issue 7 point 8: the two commands work as root too (a container, a cloud VM), from a private folder. */
(asRoot ? describe : describe.skip)('npm start as root from a 0700 folder (embedded PostgreSQL)', () => {
  it('starts with the embedded database, serves /readyz, and stops cleanly', async () => {
    const dir = privateClone();
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    let dataDir: string | undefined;
    try {
      const child = spawn(process.execPath, ['scripts/start.js'], {
        cwd: path.join(dir, 'hisho'),
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', LOG_LEVEL: 'info' },
      });
      let out = '';
      child.stdout.on('data', (d) => {
        out += String(d);
      });
      child.stderr.on('data', (d) => {
        out += String(d);
      });
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      const until = Date.now() + 60000;
      while (!/listening on http:\/\/localhost:(\d+)/.test(out)) {
        if (Date.now() > until || child.exitCode !== null) throw new Error(`no start: ${out.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const port = /listening on http:\/\/localhost:(\d+)/.exec(out)![1];
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
      // The postgres user cannot reach ./data inside the private folder: the data lives where it can, under a
      // name derived from the configured folder; the start-up log names it whole (issue 41: it was redacted as a
      // phone number when its hex digits looked like one).
      const hash = createHash('sha256')
        .update(path.resolve(dir, 'hisho', 'data'))
        .digest('hex')
        .slice(0, 12);
      dataDir = `/var/lib/hisho/data-${hash}`;
      expect(fs.existsSync(path.join(dataDir, 'PG_VERSION'))).toBe(true);
      expect(out).toContain(`"dataDir":"${dataDir}"`);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(out).not.toMatch(/Unhandled|EACCES/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90000);
});
