import { execFileSync } from 'node:child_process';
import path from 'node:path';
import * as incubating from '@opentelemetry/semantic-conventions/incubating';
import { ConfigError, tracingSettings } from '../../src/config/env';
import { GEN_AI } from '../../src/observability/genai';

const root = path.resolve(__dirname, '..', '..');

/**
 * In a fresh process: starts tracing the way `npm start` does (`app/start-tracing.ts`) with the given environment,
 * then says whether spans are made and which OpenTelemetry packages were loaded.
 */
function startIn(env: Record<string, string>): { on: boolean; loaded: string[] } {
  const code = `
    require('./src/app/start-tracing');
    const { tracingOn } = require('./src/observability/tracing');
    const loaded = Object.keys(require.cache)
      .map((f) => /node_modules\\/(@opentelemetry\\/[^/]+|@prisma\\/instrumentation)\\//.exec(f)?.[1])
      .filter(Boolean);
    console.log(JSON.stringify({ on: tracingOn(), loaded: [...new Set(loaded)] }));
    process.exit(0);`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', code], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as { on: boolean; loaded: string[] };
}

describe('tracing is off unless configured', () => {
  it('loads no OpenTelemetry package and makes no span with no OTEL_* variable (or only the service name)', () => {
    expect(startIn({})).toEqual({ on: false, loaded: [] });
    expect(startIn({ OTEL_SERVICE_NAME: 'hisho-x' })).toEqual({ on: false, loaded: [] });
    expect(startIn({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_SDK_DISABLED: 'true' }).loaded).toEqual(
      [],
    );
  }, 30000);

  it('starts the SDK and the instrumentations when an endpoint is set', () => {
    const r = startIn({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(r.on).toBe(true);
    expect(r.loaded).toEqual(
      expect.arrayContaining([
        '@opentelemetry/sdk-node',
        '@opentelemetry/instrumentation-http',
        '@opentelemetry/instrumentation-pg',
        '@prisma/instrumentation',
      ]),
    );
  }, 30000);
});

describe('tracingSettings', () => {
  it('is on with an OTLP endpoint or an exporter named, off with none, disabled or `none`', () => {
    expect(tracingSettings({}).on).toBe(false);
    expect(tracingSettings({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' }).on).toBe(false);
    const s = tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com:4318' });
    expect(s).toMatchObject({ on: true, protocol: 'http/protobuf', captureContent: false });
    expect(s.destination).toBe('https://otel.example.com:4318');
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }).on).toBe(true);
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'console' })).toMatchObject({ on: true, destination: 'console' });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }).on).toBe(
      false,
    );
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }).on).toBe(false);
    const json = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
    expect(tracingSettings(json).protocol).toBe('http/json');
    const content = { ...json, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' };
    expect(tracingSettings(content).captureContent).toBe(true);
  });

  it('names a bad variable', () => {
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/xml' })).toThrow(ConfigError);
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/xml' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/);
    expect(() => tracingSettings({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'yes' })).toThrow(
      /OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT/,
    );
  });
});

describe('the GenAI attribute names', () => {
  it('are names of the semantic conventions package (incubating)', () => {
    const names = new Set(Object.values(incubating as Record<string, unknown>).filter((v) => typeof v === 'string'));
    for (const name of Object.values(GEN_AI)) expect([name, names.has(name)]).toEqual([name, true]);
  });
});
