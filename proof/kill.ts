/**
 * (a) SIGKILL of the whole service, N times, during a steady stream of mentions with a slow model: what
 * ChatWork was told (acknowledged or not) against what it received (replies), one instance or two
 * behind a retrying proxy (rolling kills).
 */
import { startFailoverProxy } from './failover-proxy';
import { freePort, MentionStream, repliedTo, ServiceProcess, settle, sleep, tally, type Tally } from './harness';
import { ANSWER_MARKER } from './model';
import type { ProofWorld } from './world';
import { Client } from 'pg';

export interface KillOptions {
  kills: number;
  /** Mentions per second. */
  rate: number;
  /** How long an instance runs between kills (jittered ±25 %). */
  upMs: number;
  instances: 1 | 2;
  claimTtlMs: number;
}

export interface KillResult extends Tally {
  kills: number;
  /** Kill → the restarted instance ready (ms), per kill. */
  downMs: number[];
  /** Webhooks the proxy sent to the other instance (two instances only). */
  proxyRetries?: number;
}

export async function killRounds(w: ProofWorld, o: KillOptions, log: (s: string) => void): Promise<KillResult> {
  const databaseUrl = await w.pg.createDatabase(`proof_kill_${o.instances}_${Date.now().toString(36)}`);
  const ports = await Promise.all(Array.from({ length: o.instances }, () => freePort()));
  const spawn = (port: number) =>
    ServiceProcess.spawn({
      databaseUrl,
      port,
      anthropicUrl: w.llm.url,
      chatworkUrl: w.cw.url,
      claimTtlMs: o.claimTtlMs,
    });
  // Instances start one after the other (the first applies the migrations and imports the sample directory).
  const services: ServiceProcess[] = [];
  for (const port of ports) {
    const s = spawn(port);
    await s.ready();
    services.push(s);
  }
  const proxy = o.instances === 2 ? await startFailoverProxy(() => services.map((s) => s.url)) : null;
  const target = proxy ? proxy.url : services[0]!.url;
  w.model.mode = 'steady';
  const stream = new MentionStream({ target: () => target, rate: o.rate });
  const downMs: number[] = [];
  const t0run = performance.now();
  stream.start();
  try {
    for (let k = 0; k < o.kills; k++) {
      await sleep(o.upMs * (0.75 + Math.random() * 0.5));
      const i = k % services.length;
      const t0 = performance.now();
      await services[i]!.kill();
      services[i] = spawn(ports[i]!);
      await services[i]!.ready();
      downMs.push(performance.now() - t0);
      const back = Math.round(downMs.at(-1)!);
      if (process.env.PROOF_DEBUG) log(`    (kill ${k + 1} at ${Math.round(t0 - t0run)} ms)`);
      const sent = stream.outcomes.size;
      log(`    kill ${k + 1}/${o.kills}: instance ${i + 1} back after ${back} ms; ${sent} mentions sent so far`);
    }
    await sleep(o.upMs);
  } finally {
    await stream.stop();
  }
  await settle(stream.outcomes, w.cw.posts, {
    timeoutMs: o.claimTtlMs * 4 + 60000,
    quietMs: Math.max(3000, w.model.delayMs * 3),
  });
  for (const s of services) await s.stop();
  if (process.env.PROOF_DEBUG) {
    const ids = new Set(stream.outcomes.keys());
    const apologies = w.cw.posts.filter((p) => ids.has(repliedTo(p.body) ?? '') && !p.body.includes(ANSWER_MARKER));
    for (const p of apologies) log(`    apology: ${p.body.slice(0, 160)}`);
    const db = new Client({ connectionString: databaseUrl });
    await db.connect();
    const retried = await db.query(
      `SELECT id, type, state, attempts, payload->>'messageId' AS m, "orderingKey" AS k, "createdAt", "updatedAt"
         FROM work_items WHERE attempts > 1 ORDER BY id`,
    );
    for (const r of retried.rows) log(`    retried: ${JSON.stringify(r)}`);
    await db.end();
  }
  await proxy?.close();
  return {
    ...tally(stream.outcomes, w.cw.posts, ANSWER_MARKER),
    kills: o.kills,
    downMs,
    ...(proxy ? { proxyRetries: proxy.retried } : {}),
  };
}
