// First: the OpenTelemetry SDK, when configured, must start before the modules it instruments are loaded.
import './app/start-tracing';
import { ConfigError, environment, loadConfig, retiredVariables } from './config/env';
import { startService } from './app/create-hisho';
import { StartupError } from './app/startup-checks';
import { stopTracing, tracingStarted } from './app/tracing';

/** `npm start`: validate the environment, start the service, stop cleanly on SIGTERM/SIGINT (≤ 10 s). */
async function main(): Promise<void> {
  const env = environment();
  let config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  const service = await startService(config);
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
  const shutdown = (signal: string) => {
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
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: Error) => {
  // A StartupError is one sentence that already says what to do.
  console.error(err instanceof StartupError ? err.message : `Hisho failed to start: ${err.message}`);
  process.exit(1);
});
