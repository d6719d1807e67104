// First: the OpenTelemetry SDK, when configured, must start before the modules it instruments are loaded.
import './app/start-tracing';
import { ConfigError, dotEnvOrigin, environment, loadConfig, retiredVariables } from './config/env';
import { startService, type Service } from './app/create-hisho';
import { StartupError } from './app/startup-checks';
import { stopTracing, tracingStarted } from './app/tracing';

/**
 * `npm start`: validate the environment, start the service, stop cleanly on SIGTERM/SIGINT/SIGHUP (≤ 10 s).
 * The signal handlers are installed before anything starts: a signal during start-up (a process manager
 * giving up, Ctrl-C while the embedded PostgreSQL starts) stops the service as soon as it is up, instead of
 * killing this process and leaving the embedded PostgreSQL behind.
 */
async function main(): Promise<void> {
  let service: Service | null = null;
  let requested: string | null = null;
  const onSignal = (signal: string) => {
    if (requested) return; // a second Ctrl-C while stopping: the 10 s limit below still holds
    requested = signal;
    if (service) shutdown(service, signal);
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => onSignal(signal));

  const env = environment();
  let config;
  try {
    config = loadConfig(env, { origin: dotEnvOrigin() });
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  if (requested) process.exit(0);
  service = await startService(config);
  for (const variable of retiredVariables(env))
    service.logger.warn(
      { variable },
      `${variable} is no longer used (turns run in the service's own process): ignored`,
    );
  const tracing = tracingStarted();
  if (tracing)
    service.logger.info(
      { destination: tracing.destination, protocol: tracing.protocol, content: tracing.captureContent },
      'tracing: spans are exported (OpenTelemetry)',
    );
  const url = `http://localhost:${service.port}`;
  const on = service.adapters.status().map((a) => a.platform);
  const consoleUrl = on.includes('console') ? ` (console: ${url}/console)` : '';
  const adapters = on.join(', ') || 'none';
  console.log(`Hisho is listening on ${url}${consoleUrl}, adapters: ${adapters}, started in ${service.startupMs} ms`);
  if (requested) shutdown(service, requested);
}

function shutdown(service: Service, signal: string): void {
  service.logger.info({ signal }, 'shutting down');
  const force = setTimeout(() => {
    service.logger.error('shutdown took longer than 10 s; exiting');
    process.exit(1);
  }, 10000);
  force.unref();
  service
    .stop()
    .then(stopTracing)
    .then(
      () => process.exit(0),
      () => process.exit(1),
    );
}

main().catch((err: Error) => {
  // A StartupError is one sentence that already says what to do.
  console.error(err instanceof StartupError ? err.message : `Hisho failed to start: ${err.message}`);
  process.exit(1);
});
