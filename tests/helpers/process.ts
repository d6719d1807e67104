import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');

/** `npm start` as a child process (scripts/start.js: the compiled dist/) with exactly the given environment. */
export interface ServiceProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  output(): string;
  /** Resolves with the port once the service says it is listening. */
  ready: Promise<number>;
}

export function runService(env: Record<string, string>, readyMs = 60000): ServiceProcess {
  const child = spawn(process.execPath, ['scripts/start.js'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += String(d);
  });
  child.stderr!.on('data', (d) => {
    out += String(d);
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const ready = new Promise<number>((resolve, reject) => {
    const until = Date.now() + readyMs;
    const poll = () => {
      const m = /listening on http:\/\/localhost:(\d+)/.exec(out);
      if (m) return resolve(Number(m[1]));
      if (child.exitCode !== null || Date.now() > until)
        return reject(new Error(`service did not start: ${out.slice(-2000)}`));
      setTimeout(poll, 50);
    };
    poll();
  });
  return { child, exited, output: () => out, ready };
}
