// `npm run proof`: the service (as `npm start` runs it) on fresh databases of its own embedded PostgreSQL,
// with a fake ChatWork API and a fake model, put through crashes, a database restart and garbage input.
// Prints one table; exits 1 when a target (nothing lost, nothing doubled, no crash, no 5xx without an
// error id, nothing stored or executed that should not be) is missed. Sizes: see README.
import os from 'node:os';
import { dbRestart, type DbRestartResult } from './db-restart';
import { fuzzSection } from './fuzz';
import { killRounds, type KillResult } from './kill';
import { readiness, type ReadinessResult } from './readiness';
import { openProofWorld } from './world';

const num = (name: string, def: number): number => {
  const v = Number(process.env[name] ?? def);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a non-negative number`);
  return v;
};

const settings = {
  kills: num('PROOF_KILLS', 5),
  rate: num('PROOF_RATE', 4),
  upMs: num('PROOF_UP_MS', 4000),
  modelDelayMs: num('PROOF_MODEL_DELAY_MS', 1500),
  claimTtlMs: num('PROOF_CLAIM_TTL_MS', 10000),
  dbDownMs: num('PROOF_DB_DOWN_MS', 5000),
  fuzz: num('PROOF_FUZZ', 10000),
  fuzzConcurrency: num('PROOF_FUZZ_CONCURRENCY', 16),
  seed: num('PROOF_SEED', 1),
  restarts: num('PROOF_RESTARTS', 3),
  sections: (process.env.PROOF_SECTIONS ?? 'a,b,c,d').split(',').map((s) => s.trim()),
};

const s1 = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const pct = (a: number, n: number): string => (n === 0 ? '0%' : `${Math.round((a / n) * 100)}%`);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

function killRow(name: string, r: KillResult): string {
  const extra = r.proxyRetries !== undefined ? `; the proxy re-sent ${r.proxyRetries} to the other instance` : '';
  return `| ${name} | ${r.sent} sent, ${r.acknowledged} acknowledged, ${r.refused} refused (${pct(r.refused, r.sent)}) | **${r.lost} lost · ${r.doubled} answered twice** `
    + `| ${r.apologies} answered with an apology; back after p50 ${s1(median(r.downMs))}${extra} |`;
}

function dbRow(r: DbRestartResult): string {
  return `| (b) database stopped ${s1(r.downMs)}, then started | ${r.sent} sent, ${r.acknowledged} acknowledged, ${r.refused} refused (503 while down) `
    + `| **${r.lost} lost · ${r.doubled} answered twice** | recovered on its own: ready ${Math.round(r.readyAfterMs)} ms, accepting ${Math.round(r.acceptingAfterMs)} ms after the database; `
    + `process ${r.crashed ? '**crashed**' : 'never restarted'} |`;
}

async function main(): Promise<number> {
  const log = (line: string) => console.log(line);
  const started = new Date();
  const cpu = os.cpus();
  const machine = `${cpu.length} × ${cpu[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GB RAM, ${os.type()} ${os.release()}, Node ${process.version}`;
  log(`npm run proof — ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC — ${machine}`);
  log(`settings: kills ${settings.kills}, ${settings.rate} mentions/s, model delay ${settings.modelDelayMs} ms, claim TTL ${settings.claimTtlMs} ms, `
    + `database down ${settings.dbDownMs} ms, fuzz ${settings.fuzz} bodies (seed ${settings.seed}), restarts ${settings.restarts}`);
  const rows: string[] = [];
  const notes: string[] = [];
  const missed: string[] = [];
  const w = await openProofWorld();
  try {
    if (settings.sections.includes('a')) {
      w.model.delayMs = settings.modelDelayMs;
      for (const instances of [1, 2] as const) {
        log(`(a) SIGKILL ×${settings.kills}, ${instances === 1 ? 'one instance' : 'two instances behind a retrying proxy (rolling)'}…`);
        const r = await killRounds(w, { kills: settings.kills, rate: settings.rate, upMs: settings.upMs, instances, claimTtlMs: settings.claimTtlMs }, log);
        rows.push(killRow(`(a) SIGKILL ×${r.kills} during a stream, model ${s1(settings.modelDelayMs)}, ${instances === 1 ? 'one instance' : 'two instances + proxy'}`, r));
        if (r.lost > 0) missed.push(`(a${instances}) lost ${r.lost}: ${r.lostIds.slice(0, 5).join(', ')}`);
        if (r.doubled > 0) missed.push(`(a${instances}) answered twice ${r.doubled}: ${r.doubledIds.slice(0, 5).join(', ')}`);
      }
    }
    if (settings.sections.includes('b')) {
      log(`(b) database restart…`);
      w.model.delayMs = settings.modelDelayMs;
      const r = await dbRestart(w, { rate: settings.rate, downMs: settings.dbDownMs, claimTtlMs: settings.claimTtlMs }, log);
      rows.push(dbRow(r));
      if (r.lost > 0) missed.push(`(b) lost ${r.lost}: ${r.lostIds.slice(0, 5).join(', ')}`);
      if (r.doubled > 0) missed.push(`(b) answered twice ${r.doubled}: ${r.doubledIds.slice(0, 5).join(', ')}`);
      if (r.crashed) missed.push('(b) the service process exited');
    }
    if (settings.sections.includes('c')) {
      log(`(c) fuzzing ${settings.fuzz} bodies…`);
      w.model.delayMs = 0;
      const f = await fuzzSection(w, { n: settings.fuzz, seed: settings.seed, concurrency: settings.fuzzConcurrency }, log);
      const executed = Object.values(f.executed).reduce((a, b) => a + b, 0);
      const e = f.executed;
      notes.push(`(c) answers by kind: ${Object.entries(f.byKind).sort().map(([k, v]) => `${k} ${Object.entries(v).map(([s, n]) => `${s}×${n}`).join(' ')}`).join('; ')}`);
      rows.push(`| (c) ${f.n.toLocaleString('en-US')} fuzzed webhook bodies (seed ${settings.seed}) | random bytes, bad signatures, truncated and deeply nested JSON, wrong types, `
        + `1 MB strings, odd Unicode, validly signed hostile content (${f.acknowledged} acknowledged) `
        + `| **${f.crashed ? 'crashed' : '0 crashes'} · ${f.serverErrorsWithoutId} 5xx without error id (${f.serverErrors} 5xx) · ${f.storedUnacknowledged} stored though refused · ${executed} executed** `
        + `| executed = tasks ${e.tasks}, ChatWork tasks ${e.chatworkTasks}, announcements ${e.announcements}, memories ${e.memories}, reminders ${e.reminders}, goals ${e.goals}; `
        + `mention markup in replies ${f.markupInReplies}; valid hostile messages: ${f.unanswered} unanswered, ${f.doubled} answered twice (${f.untaggable.stored} had ids unusable in a reply tag and were answered without one) |`);
      if (f.crashed) missed.push('(c) the service crashed');
      if (f.serverErrorsWithoutId > 0) missed.push(`(c) ${f.serverErrorsWithoutId} 5xx without error id: ${f.serverErrorExamples.join('; ')}`);
      if (f.storedUnacknowledged > 0) missed.push(`(c) ${f.storedUnacknowledged} stored though refused`);
      if (executed > 0 || f.markupInReplies > 0) missed.push(`(c) executed ${executed}, markup in replies ${f.markupInReplies}`);
      if (f.unanswered > 0 || f.doubled > 0) missed.push(`(c) valid messages unanswered ${f.unanswered}, answered twice ${f.doubled}`);
    }
    if (settings.sections.includes('d')) {
      log(`(d) restart to ready…`);
      const r: ReadinessResult = await readiness(w, { restarts: settings.restarts }, log);
      rows.push(`| (d) process start → first webhook accepted | fresh database (migrations + sample directory) ${s1(r.firstStartMs)}; restart (SIGTERM, start) ×${r.restartMs.length} `
        + `| **p50 ${s1(median(r.restartMs))}, max ${s1(Math.max(...r.restartMs))}** | a single instance refuses webhooks for this long on every deploy — run two (README) |`);
    }
  } finally {
    await w.close();
  }
  log('');
  log('| check | load | result | notes |');
  log('|---|---|---|---|');
  for (const r of rows) log(r);
  log('');
  for (const n of notes) log(n);
  log(missed.length === 0 ? 'targets met: nothing lost, nothing answered twice, no crash, no 5xx without an error id, nothing stored or executed that should not be.'
    : `targets missed:\n${missed.map((m) => `  - ${m}`).join('\n')}`);
  log(`finished in ${s1(Date.now() - started.getTime())}`);
  return missed.length === 0 ? 0 : 1;
}

main().then((code) => process.exit(code), (err: Error) => { console.error(`proof failed: ${err.stack ?? err.message}`); process.exit(2); });
