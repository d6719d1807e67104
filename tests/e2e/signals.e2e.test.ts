import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { tempDataDir } from '../../src/db/embedded-postgres';

const root = path.resolve(__dirname, '..', '..');
const npm = spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim();

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

/**
 * Issue 41: process managers (systemd, a container runtime, Ctrl-C in a terminal) signal the process `npm start`
 * started. npm passes the signal to the shell it ran `scripts/start.js` in; the service and its embedded PostgreSQL
 * must stop with it — nothing left running on the ports.
 */
describe('npm start stops on SIGTERM and SIGINT with its embedded PostgreSQL', () => {
  const dataDir = tempDataDir('hisho-signals-');
  afterAll(() => fs.rmSync(path.dirname(dataDir), { recursive: true, force: true }));

  /** `npm start` (the real npm) on the embedded database; resolves when the given output appears. */
  const start = () => {
    const child = spawn(npm, ['start'], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        PORT: '0',
        LOG_LEVEL: 'info',
        EMBEDDED_DATA_DIR: dataDir,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (out += String(d)));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const seen = async (pattern: RegExp) => {
      const until = Date.now() + 60000;
      while (!pattern.test(out)) {
        if (Date.now() > until || child.exitCode !== null) throw new Error(`not seen ${pattern}: ${out.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    return { child, exited, seen, output: () => out };
  };
  /** The embedded server's PID and port, from PostgreSQL's own lock file. */
  const postmaster = () => {
    const lines = fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
    return { pid: Number(lines[0]), port: Number(lines[3]) };
  };
  const stopsCleanly = async (signal: NodeJS.Signals, when: RegExp) => {
    const p = start();
    try {
      await p.seen(when);
      const pg = postmaster();
      expect(alive(pg.pid)).toBe(true);
      const t0 = Date.now();
      p.child.kill(signal);
      expect(await p.exited).toBe(0);
      expect(Date.now() - t0).toBeLessThan(12000);
      // The embedded PostgreSQL went with it: no process, no lock file, nothing on its port.
      expect(alive(pg.pid)).toBe(false);
      expect(fs.existsSync(path.join(dataDir, 'postmaster.pid'))).toBe(false);
      expect(await listening(pg.port)).toBe(false);
      return p.output();
    } finally {
      p.child.kill('SIGKILL');
    }
  };

  it('SIGTERM to npm stops the service and the embedded PostgreSQL', async () => {
    const out = await stopsCleanly('SIGTERM', /Hisho is listening on http:\/\/localhost:\d+/);
    expect(out).toContain('"signal":"SIGTERM"');
  }, 90000);

  it('SIGINT to npm (Ctrl-C) does the same', async () => {
    const out = await stopsCleanly('SIGINT', /Hisho is listening on http:\/\/localhost:\d+/);
    expect(out).toContain('"signal":"SIGINT"');
  }, 90000);

  it('a signal during start-up stops the service once it is up, with the database', async () => {
    const out = await stopsCleanly('SIGTERM', /embedded PostgreSQL started/);
    expect(out).toContain('"signal":"SIGTERM"');
  }, 90000);
});
