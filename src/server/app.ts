import express, { type ErrorRequestHandler, type Express, type Router } from 'express';
import { asAppError } from '../core/app-error';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import { FAVICON_SVG } from './favicon';

export interface AppDeps {
  logger: Logger;
  metrics: Metrics;
  /** Routers in mounting order; webhook routers (raw bodies) must come before any JSON parser. */
  routers: Router[];
  /** Database reachable (for /readyz). */
  ready: () => Promise<boolean>;
  /** The platform adapters and whether each is connected (/readyz lists them; one down does not fail it). */
  adapters?: () => readonly { platform: string; state: 'up' | 'down' }[];
  /** Called on each /metrics scrape to refresh gauges. */
  beforeScrape?: () => Promise<void>;
}

/** The HTTP surface (SPEC §4): health, readiness, metrics, and the adapters' routers. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const ok = await deps.ready().catch(() => false);
    const adapters = Object.fromEntries((deps.adapters?.() ?? []).map((a) => [a.platform, a.state]));
    res.status(ok ? 200 : 503).json({ status: ok ? 'ready' : 'database unavailable', adapters });
  });
  app.get('/metrics', async (_req, res) => {
    await deps.beforeScrape?.().catch(() => undefined);
    res.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });
  app.get(['/favicon.ico', '/favicon.svg'], (_req, res) => {
    res.type('image/svg+xml').set('cache-control', 'public, max-age=86400').send(FAVICON_SVG);
  });
  for (const r of deps.routers) app.use(r);
  app.get('/', (_req, res) => {
    res.redirect('/console');
  });

  const onError: ErrorRequestHandler = (err, _req, res, _next) => {
    const status = typeof (err as { status?: unknown }).status === 'number' ? (err as { status: number }).status : 500;
    if (status === 413) return void res.status(413).type('text/plain').send('payload too large');
    if (status === 400) return void res.status(400).type('text/plain').send('bad request');
    const app = asAppError(err);
    deps.logger.error({ errorId: app.errorId, code: app.code, err: app.message }, 'unhandled HTTP error');
    res.status(500).type('text/plain').send(`internal error (${app.errorId})`);
  };
  app.use(onError);
  return app;
}
