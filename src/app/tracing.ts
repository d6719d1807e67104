/**
 * Tracing's start and stop (issue 43). `app/start-tracing.ts` calls {@link startTracing} before anything else is
 * loaded (the http, express, pg and Prisma instrumentations patch those modules as they are first required). Off
 * unless an `OTEL_*` variable configures an exporter ({@link tracingSettings}): then nothing is required here
 * beyond the environment's parser, and no OpenTelemetry package is loaded.
 */
import type { IncomingMessage } from 'node:http';
import { tracingSettings, type TracingSettings } from '../config/env';
import { installTracing } from '../observability/tracing';

/** The running SDK's stop, when tracing is on. */
let shutdown: (() => Promise<void>) | null = null;
let started: TracingSettings | null = null;

/** Requests whose spans would only be noise: probes and scrapes. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics', '/favicon.ico']);

/**
 * Starts the OpenTelemetry SDK when the environment configures it; returns the settings (`on: false`: nothing was
 * loaded). Variables from `.env` are put into the process's environment first, where the SDK reads them.
 */
export function startTracing(env: Record<string, string | undefined>): TracingSettings {
  const settings = tracingSettings(env);
  if (!settings.on || shutdown) return settings;
  // The one place that writes the process's environment: the SDK reads OTEL_* there, `.env` is ours.
  for (const [k, v] of Object.entries(settings.variables)) process.env[k] ??= v;

  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const { trace } = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  const { NodeSDK, tracing } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  // The SDK's own reading of OTEL_TRACES_SAMPLER (not exported from its index; the version is pinned).
  type FromEnv = typeof import('@opentelemetry/sdk-node/build/src/create-from-env');
  const { createSamplerFromEnv } = require('@opentelemetry/sdk-node/build/src/create-from-env') as FromEnv;
  const { HttpInstrumentation } =
    require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { ExpressInstrumentation } =
    require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express');
  const { PgInstrumentation } =
    require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { PrismaInstrumentation } = require('@prisma/instrumentation') as typeof import('@prisma/instrumentation');
  const { otelTracingBackend } =
    require('../observability/otel-tracer') as typeof import('../observability/otel-tracer');
  /* eslint-enable @typescript-eslint/no-require-imports */

  // The sampler the variables choose (OTEL_TRACES_SAMPLER; default parent-based always-on), except that a database
  // statement or a Prisma operation outside any span (the queue's polls, heartbeats, sweeps) starts no trace.
  const chosen = createSamplerFromEnv() ?? new tracing.ParentBasedSampler({ root: new tracing.AlwaysOnSampler() });
  const sampler: import('@opentelemetry/sdk-node').tracing.Sampler = {
    shouldSample(ctx, traceId, name, kind, attributes, links) {
      if (!trace.getSpanContext(ctx) && name.startsWith('prisma:'))
        return { decision: tracing.SamplingDecision.NOT_RECORD };
      return chosen.shouldSample(ctx, traceId, name, kind, attributes, links);
    },
    toString: () => `HishoSampler{${chosen.toString()}}`,
  };

  const sdk = new NodeSDK({
    ...(env.OTEL_SERVICE_NAME ? {} : { serviceName: 'hisho' }),
    sampler,
    // Traces only: metrics stay on /metrics (Prometheus), logs on stdout.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req: IncomingMessage) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0]!),
        // A call outside any span (a background poll, the exporter itself) starts no trace.
        requireParentforOutgoingSpans: true,
      }),
      new ExpressInstrumentation(),
      new PgInstrumentation({ requireParentSpan: true }),
      new PrismaInstrumentation(),
    ],
  });
  sdk.start();
  installTracing(otelTracingBackend({ captureContent: settings.captureContent }));
  shutdown = () => sdk.shutdown();
  started = settings;
  return settings;
}

/** The settings tracing started with, or null when it is off. */
export function tracingStarted(): TracingSettings | null {
  return started;
}

/** Sends the spans still buffered and stops the SDK (at shutdown); nothing when tracing is off. */
export async function stopTracing(): Promise<void> {
  const stop = shutdown;
  shutdown = null;
  installTracing(null);
  await stop?.().catch(() => undefined);
}
