// `npm run proof`: the service (as `npm start` runs it) on fresh databases of its own embedded PostgreSQL,
// with a fake ChatWork API and a fake model, put through crashes, a database restart and garbage input.
// Prints one table; exits 1 when a target (nothing lost, nothing doubled, no crash, no 5xx without an
// error id, nothing stored or executed that should not be) is missed. Sizes: PROOF_* (see docs/performance.md).
import os from 'node:os';
import { dbRestart } from './db-restart';
import { fuzzSection } from './fuzz';
import { killRounds } from './kill';
import { readiness } from './readiness';
import { openProofWorld, type ProofWorld } from './world';

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
const first = (ids: string[]): string => ids.slice(0, 5).join(', ');

/** The printed outcome: table rows, notes under the table, and the targets that were missed. */
interface Findings {
  rows: string[][];
  notes: string[];
  missed: string[];
}

type Log = (line: string) => void;

async function sectionA(w: ProofWorld, f: Findings, log: Log): Promise<void> {
  w.model.delayMs = settings.modelDelayMs;
  const which = (process.env.PROOF_INSTANCES ?? '1,2').split(',').map((s) => Number(s.trim()));
  for (const instances of ([1, 2] as const).filter((n) => which.includes(n))) {
    const who = instances === 1 ? 'one instance' : 'two instances behind a retrying proxy (rolling kills)';
    log(`(a) SIGKILL ×${settings.kills}, ${who}…`);
    const { kills, rate, upMs, claimTtlMs } = settings;
    const r = await killRounds(w, { kills, rate, upMs, claimTtlMs, instances }, log);
    const proxy = r.proxyRetries !== undefined ? `; the proxy re-sent ${r.proxyRetries} to the other instance` : '';
    const setup = instances === 1 ? 'one instance' : 'two instances + proxy';
    f.rows.push([
      `(a) SIGKILL ×${r.kills} during a stream, model ${s1(settings.modelDelayMs)}, ${setup}`,
      `${r.sent} sent, ${r.acknowledged} acknowledged, ${r.refused} refused (${pct(r.refused, r.sent)})`,
      `**${r.lost} lost · ${r.doubled} answered twice**`,
      `${r.apologies} answered with an apology; back after p50 ${s1(median(r.downMs))}${proxy}`,
    ]);
    if (r.lost > 0) f.missed.push(`(a, ${who}) lost ${r.lost}: ${first(r.lostIds)}`);
    if (r.doubled > 0) f.missed.push(`(a, ${who}) answered twice ${r.doubled}: ${first(r.doubledIds)}`);
  }
}

async function sectionB(w: ProofWorld, f: Findings, log: Log): Promise<void> {
  w.model.delayMs = settings.modelDelayMs;
  const { rate, dbDownMs: downMs, claimTtlMs } = settings;
  for (const crash of [false, true]) {
    const how = crash ? 'killed (SIGKILL)' : 'stopped';
    log(`(b) database ${crash ? 'crash' : 'restart'}…`);
    const r = await dbRestart(w, { rate, downMs, claimTtlMs, crash }, log);
    const tag = crash ? '(b, crash)' : '(b)';
    f.rows.push([
      `(b) database ${how} ${s1(r.downMs)}, then started, model ${s1(settings.modelDelayMs)}`,
      `${r.sent} sent, ${r.acknowledged} acknowledged, ${r.refused} refused (503 while down)`,
      `**${r.lost} lost · ${r.doubled} answered twice**`,
      `recovered on its own: ready ${Math.round(r.readyAfterMs)} ms, accepting ${Math.round(r.acceptingAfterMs)} ms ` +
        `after the database; process ${r.crashed ? '**exited**' : 'never restarted'}`,
    ]);
    if (r.lost > 0) f.missed.push(`${tag} lost ${r.lost}: ${first(r.lostIds)}`);
    if (r.doubled > 0) f.missed.push(`${tag} answered twice ${r.doubled}: ${first(r.doubledIds)}`);
    if (r.crashed) f.missed.push(`${tag} the service process exited`);
  }
}

async function sectionC(w: ProofWorld, f: Findings, log: Log): Promise<void> {
  log(`(c) fuzzing ${settings.fuzz} bodies…`);
  w.model.delayMs = 0;
  const r = await fuzzSection(w, { n: settings.fuzz, seed: settings.seed, concurrency: settings.fuzzConcurrency }, log);
  const e = r.executed;
  const executed = Object.values(e).reduce((a, b) => a + b, 0);
  const statuses = (v: Record<string, number>) =>
    Object.entries(v)
      .map(([s, n]) => `${s}×${n}`)
      .join(' ');
  const kinds = Object.entries(r.byKind)
    .sort()
    .map(([k, v]) => `${k} ${statuses(v)}`);
  f.notes.push(`(c) answers by kind: ${kinds.join('; ')}`);
  f.rows.push([
    `(c) ${r.n.toLocaleString('en-US')} fuzzed webhook bodies (seed ${settings.seed})`,
    'random bytes, bad signatures, truncated and deeply nested JSON, wrong types, 1 MB strings, odd Unicode, ' +
      `validly signed hostile content (${r.acknowledged} acknowledged)`,
    `**${r.crashed ? 'crashed' : '0 crashes'} · ${r.serverErrorsWithoutId} 5xx without error id ` +
      `(${r.serverErrors} 5xx) · ${r.storedUnacknowledged} stored though refused · ${executed} executed**`,
    `executed = tasks ${e.tasks}, ChatWork tasks ${e.chatworkTasks}, announcements ${e.announcements}, memories ` +
      `${e.memories}, reminders ${e.reminders}, goals ${e.goals}; mention markup in replies ${r.markupInReplies}; ` +
      `valid hostile messages: ${r.unanswered} unanswered, ${r.doubled} answered twice ` +
      `(${r.untaggable.stored} had ids unusable in a reply tag and were answered without one)`,
  ]);
  if (r.crashed) f.missed.push('(c) the service crashed');
  if (r.serverErrorsWithoutId > 0) f.missed.push(`(c) 5xx without error id: ${r.serverErrorExamples.join('; ')}`);
  if (r.storedUnacknowledged > 0) f.missed.push(`(c) ${r.storedUnacknowledged} stored though refused`);
  if (executed > 0 || r.markupInReplies > 0) f.missed.push(`(c) executed ${executed}, markup ${r.markupInReplies}`);
  if (r.unanswered > 0 || r.doubled > 0) f.missed.push(`(c) unanswered ${r.unanswered}, answered twice ${r.doubled}`);
}

async function sectionD(w: ProofWorld, f: Findings, log: Log): Promise<void> {
  log('(d) restart to ready…');
  const r = await readiness(w, { restarts: settings.restarts }, log);
  f.rows.push([
    '(d) process start → first webhook accepted',
    `fresh database (migrations + sample directory) ${s1(r.firstStartMs)}; ` +
      `restart (SIGTERM, start) ×${r.restartMs.length}`,
    `**p50 ${s1(median(r.restartMs))}, max ${s1(Math.max(...r.restartMs))}**`,
    'a single instance refuses webhooks for this long on every deploy: run two (docs/operations.md)',
  ]);
}

async function main(): Promise<number> {
  const log: Log = (line) => console.log(line);
  const started = new Date();
  const cpu = os.cpus();
  const machine =
    `${cpu.length} × ${cpu[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GB RAM, ` +
    `${os.type()} ${os.release()}, Node ${process.version}`;
  log(`npm run proof — ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC — ${machine}`);
  log(
    `settings: kills ${settings.kills}, ${settings.rate} mentions/s, model delay ${settings.modelDelayMs} ms, ` +
      `claim TTL ${settings.claimTtlMs} ms, database down ${settings.dbDownMs} ms, fuzz ${settings.fuzz} bodies ` +
      `(seed ${settings.seed}), restarts ${settings.restarts}`,
  );
  const f: Findings = { rows: [], notes: [], missed: [] };
  const sections: [string, (w: ProofWorld, f: Findings, log: Log) => Promise<void>][] = [
    ['a', sectionA],
    ['b', sectionB],
    ['c', sectionC],
    ['d', sectionD],
  ];
  const w = await openProofWorld();
  try {
    for (const [name, run] of sections) if (settings.sections.includes(name)) await run(w, f, log);
  } finally {
    await w.close();
  }
  log('');
  log('| check | load | result | notes |');
  log('|---|---|---|---|');
  for (const r of f.rows) log(`| ${r.join(' | ')} |`);
  log('');
  for (const n of f.notes) log(n);
  log(
    f.missed.length === 0
      ? 'targets met: nothing lost, nothing answered twice, no crash, no 5xx without an error id, nothing stored or ' +
          'executed that should not be.'
      : `targets missed:\n${f.missed.map((m) => `  - ${m}`).join('\n')}`,
  );
  log(`finished in ${s1(Date.now() - started.getTime())}`);
  return f.missed.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`proof failed: ${err.stack ?? err.message}`);
    process.exit(2);
  },
);
