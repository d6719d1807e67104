/**
 * Imported first by `main.ts`, so the OpenTelemetry SDK (when configured) starts before express, pg and Prisma are
 * loaded. A bad `OTEL_*` value stops start-up like any bad variable.
 */
import { ConfigError, environment } from '../config/env';
import { startTracing } from './tracing';

try {
  startTracing(environment());
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(1);
}
