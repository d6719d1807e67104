import fs from 'node:fs';
import path from 'node:path';

/**
 * The embedded PostgreSQL's data folder is already in use: a server runs on it (PostgreSQL's own lock file,
 * `postmaster.pid`, names a live `postgres` process). `hishoPid` is the process that started it when that one
 * still runs (another `npm start`), null when the server was left behind by a process that is gone.
 */
export class EmbeddedInUse extends Error {
  constructor(
    readonly dataDir: string,
    readonly postgresPid: number,
    readonly hishoPid: number | null,
  ) {
    super(`the embedded PostgreSQL data folder ${dataDir} is in use by PostgreSQL PID ${postgresPid}`);
    this.name = 'EmbeddedInUse';
  }
}

const readProc = (pid: number, file: string): string | null => {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return null;
  }
};

/**
 * Throws {@link EmbeddedInUse} when a live PostgreSQL holds `dataDir` (a lock file whose process is gone or is not
 * PostgreSQL is stale: PostgreSQL itself removes it). Reads Linux's /proc; elsewhere it checks nothing.
 */
export function checkNotInUse(dataDir: string): void {
  let first: string;
  try {
    first = fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0] ?? '';
  } catch {
    return;
  }
  const pid = Number(first.trim());
  if (!Number.isInteger(pid) || pid <= 0) return;
  const comm = readProc(pid, 'comm')?.trim();
  if (comm !== 'postgres') return;
  // /proc/<pid>/stat: "pid (comm) state ppid …" — the parent is what started the server.
  const stat = readProc(pid, 'stat') ?? '';
  const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  // A server left behind is adopted by init (or a sub-reaper such as systemd): its parent is no node process.
  const parent = Number.isInteger(ppid) && ppid >= 1 ? (readProc(ppid, 'cmdline') ?? '') : '';
  throw new EmbeddedInUse(dataDir, pid, /(^|\/)node\0|npm|hisho/.test(parent) ? ppid : null);
}
