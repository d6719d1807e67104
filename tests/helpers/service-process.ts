/**
 * The service in a process of its own, for tests that kill it (`fork` with `--import tsx`): configuration
 * from the environment, the zero-latency scripted model of the benchmarks. Sends `{ type: 'up', port }`
 * to the parent once it listens.
 */
import { ZeroLatencyLlm } from '../../bench/fake-llm';
import { loadConfig } from '../../src/config/env';
import { startService } from '../../src/service';

startService(loadConfig(process.env), { llm: new ZeroLatencyLlm(), workerPollMs: 50, outboxReconcileDelayMs: 100 })
  .then((svc) => process.send?.({ type: 'up', port: svc.port }))
  .catch((err: Error) => {
    console.error(`service failed to start: ${err.message}`);
    process.exit(1);
  });
