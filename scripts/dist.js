// The compiled service in dist/ (what `npm start` runs): `build()` compiles src/ and handlers/ with tsc and
// copies the files the service reads at run time next to the compiled code (dist/src/... → dist/prompts, …);
// `ensureBuilt()` builds when dist/ is missing or older than any source, once even when several processes
// start together (a lock file; the others wait for it).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist');
const stampFile = path.join(dist, '.build-stamp');
const lockFile = path.join(root, '.dist-build.lock');

/** What the build reads: a change to any of these makes dist/ stale. */
const SOURCES = [
  'src',
  'handlers',
  'prompts',
  'config',
  'prisma',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
];
/** Files the service reads at run time, relative to the compiled code (copied as they are). */
const ASSETS = [
  'prompts',
  'config',
  'prisma/migrations',
  'src/adapters/console/console.html',
  'src/server/admin/admin.html',
  'src/server/admin/admin.js',
  'src/server/admin/format.js',
  'src/server/admin/login.html',
];

function newestMtime(p) {
  let st;
  try {
    st = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  // Files only: a copy of the project (fresh folder times, file times kept) is as current as its files.
  let max = 0;
  for (const e of fs.readdirSync(p)) max = Math.max(max, newestMtime(path.join(p, e)));
  return max;
}

/** Why dist/ must be built, or null when it is up to date. */
function staleReason() {
  if (!fs.existsSync(path.join(dist, 'src', 'main.js')) || !fs.existsSync(stampFile)) return 'dist/ is missing';
  const built = fs.statSync(stampFile).mtimeMs;
  const changed = SOURCES.find((s) => newestMtime(path.join(root, s)) > built);
  return changed ? `${changed} changed since the last build` : null;
}

function build() {
  const started = Date.now();
  fs.rmSync(dist, { recursive: true, force: true });
  const tsc = require.resolve('typescript/bin/tsc');
  const res = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  if (res.status !== 0) throw new Error('the TypeScript build failed (see above)');
  for (const a of ASSETS) fs.cpSync(path.join(root, a), path.join(dist, a), { recursive: true });
  fs.writeFileSync(stampFile, new Date().toISOString() + '\n');
  return Date.now() - started;
}

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Builds dist/ when it is missing or stale, saying so; returns quietly when it is current. */
function ensureBuilt(log = (m) => console.log(m)) {
  for (;;) {
    const reason = staleReason();
    if (!reason) return;
    let fd;
    try {
      fd = fs.openSync(lockFile, 'wx');
    } catch {
      // Another process is building; a lock older than 5 minutes is left from a killed build.
      try {
        if (Date.now() - fs.statSync(lockFile).mtimeMs > 300000) fs.rmSync(lockFile, { force: true });
      } catch {
        /* gone already */
      }
      sleep(200);
      continue;
    }
    try {
      if (!staleReason()) return;
      log(`[hisho] Compiling the service to dist/ (${reason}); this takes about 20 s and happens once per change.`);
      const ms = build();
      log(`[hisho] Compiled in ${(ms / 1000).toFixed(1)} s.`);
      return;
    } finally {
      fs.closeSync(fd);
      fs.rmSync(lockFile, { force: true });
    }
  }
}

module.exports = { build, ensureBuilt, staleReason, dist };
