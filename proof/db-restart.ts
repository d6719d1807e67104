/**
 * (b) The database server stopped and started again (a real stop of the PostgreSQL process), or crashed (SIGKILL
 * to it and every backend: WAL not yet written is lost, the start recovers from disk), during a steady stream of
 * mentions: the service must recover on its own — no crash, no restart — and lose or double nothing it
 * acknowledged. The crash is what the statements that commit without waiting for the flush (src/db/sql.ts,
 * NO_FLUSH_WAIT) must survive.
 */
import { freePort, MentionStream, ServiceProcess, settle, sleep, tally, type Tally } from './harness';
import { ANSWER_MARKER } from './model';
import type { ProofWorld } from './world';

export interface DbRestartOptions {
  rate: number;
  /** How long the database stays down. */
  downMs: number;
  claimTtlMs: number;
  /** SIGKILL instead of a stop. */
  crash?: boolean;
}

export interface DbRestartResult extends Tally {
  downMs: number;
  /** Database back → /readyz 200. */
  readyAfterMs: number;
  /** Database back → the first mention acknowledged again. */
  acceptingAfterMs: number;
  /** The service process exited at some point (it must not). */
  crashed: boolean;
}

export async function dbRestart(
  w: ProofWorld,
  o: DbRestartOptions,
  log: (s: string) => void,
): Promise<DbRestartResult> {
  const { start } = w.pg;
  const stop = o.crash ? w.pg.kill : w.pg.stop;
  if (!stop || !start) throw new Error("the database restart needs the proof's own embedded PostgreSQL");
  const databaseUrl = await w.pg.createDatabase(`proof_db_${Date.now().toString(36)}`);
  const svc = ServiceProcess.spawn({
    databaseUrl,
    port: await freePort(),
    anthropicUrl: w.llm.url,
    chatworkUrl: w.cw.url,
    claimTtlMs: o.claimTtlMs,
  });
  await svc.ready();
  w.model.mode = 'steady';
  const stream = new MentionStream({ target: () => svc.url, rate: o.rate });
  stream.start();
  let readyAfterMs = NaN;
  let acceptingAfterMs = NaN;
  try {
    await sleep(3000);
    await stop.call(w.pg);
    log(`    database ${o.crash ? 'killed' : 'stopped'}; ${stream.outcomes.size} mentions sent so far`);
    await sleep(o.downMs);
    await start.call(w.pg);
    const up = performance.now();
    log(`    database started again after ${o.downMs} ms`);
    while (Number.isNaN(readyAfterMs) && performance.now() - up < 60000) {
      if (
        await fetch(`${svc.url}/readyz`).then(
          (r) => r.status === 200,
          () => false,
        )
      )
        readyAfterMs = performance.now() - up;
      else await sleep(20);
    }
    await sleep(5000);
    acceptingAfterMs = (stream.answers.find((a) => a.at > up && a.status === 200)?.at ?? NaN) - up;
  } finally {
    await stream.stop();
  }
  await settle(stream.outcomes, w.cw.posts, {
    timeoutMs: o.claimTtlMs * 4 + 60000,
    quietMs: Math.max(3000, w.model.delayMs * 3),
  });
  const crashed = !svc.alive;
  await svc.stop();
  return {
    ...tally(stream.outcomes, w.cw.posts, ANSWER_MARKER),
    downMs: o.downMs,
    readyAfterMs,
    acceptingAfterMs,
    crashed,
  };
}
