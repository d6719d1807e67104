/**
 * (d) Restart-to-ready: from starting the process to the first webhook accepted (200), on a fresh
 * database (migrations and the sample directory included) and on restarts of an existing one.
 */
import { deliver, freePort, mention, ServiceProcess, sleep } from './harness';
import type { ProofWorld } from './world';

export interface ReadinessResult {
  firstStartMs: number;
  restartMs: number[];
}

/** Starts the process and sends a signed mention every 20 ms until one is accepted. */
async function startToAccepted(
  spawn: () => ServiceProcess,
  timeoutMs = 60000,
): Promise<{ svc: ServiceProcess; ms: number }> {
  const svc = spawn();
  for (;;) {
    const r = await deliver(svc.url, mention({ room: 5001, from: 1004, text: '起動の確認です' }), 2000);
    if (r.status === 200) return { svc, ms: performance.now() - svc.startedAt };
    if (!svc.alive) throw new Error(`the service exited while starting:\n${svc.tail()}`);
    if (performance.now() - svc.startedAt > timeoutMs)
      throw new Error(`no webhook accepted within ${timeoutMs} ms:\n${svc.tail()}`);
    await sleep(20);
  }
}

export async function readiness(
  w: ProofWorld,
  o: { restarts: number },
  log: (s: string) => void,
): Promise<ReadinessResult> {
  const databaseUrl = await w.pg.createDatabase(`proof_ready_${Date.now().toString(36)}`);
  const port = await freePort();
  const spawn = () => ServiceProcess.spawn({ databaseUrl, port, anthropicUrl: w.llm.url, chatworkUrl: w.cw.url });
  w.model.mode = 'steady';
  const first = await startToAccepted(spawn);
  let svc = first.svc;
  const firstStartMs = first.ms;
  log(`    first start on a fresh database: ${Math.round(firstStartMs)} ms`);
  const restartMs: number[] = [];
  for (let i = 0; i < o.restarts; i++) {
    await svc.stop();
    const r = await startToAccepted(spawn);
    svc = r.svc;
    restartMs.push(r.ms);
    log(`    restart ${i + 1}/${o.restarts}: ${Math.round(r.ms)} ms`);
  }
  await svc.stop();
  return { firstStartMs, restartMs };
}
