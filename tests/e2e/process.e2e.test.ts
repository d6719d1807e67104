import { spawn } from 'node:child_process';
import path from 'node:path';
import { createTestDatabase } from '../helpers/db';

const root = path.resolve(__dirname, '..', '..');

function run(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => {
    out += String(d);
  });
  child.stderr.on('data', (d) => {
    out += String(d);
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, exited, output: () => out };
}

describe('the service process (npm start)', () => {
  it('starts, serves health, and stops cleanly on SIGTERM within 10 s', async () => {
    const t = await createTestDatabase();
    await t.close();
    const p = run({ DATABASE_URL: t.url, PORT: '0' });
    const until = Date.now() + 30000;
    while (!/listening on http:\/\/localhost:(\d+)/.test(p.output())) {
      if (Date.now() > until) throw new Error(`no start: ${p.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const port = /listening on http:\/\/localhost:(\d+)/.exec(p.output())![1];
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    const t0 = Date.now();
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10000);
  }, 40000);

  it('refuses a bad configuration with a message naming the variable, never its value', async () => {
    const p = run({ PORT: 'eighty', DATABASE_URL: 'mysql://root:hunter2secret@db/x' });
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain('PORT');
    expect(p.output()).toContain('DATABASE_URL');
    expect(p.output()).not.toContain('hunter2secret');
  }, 20000);
});
