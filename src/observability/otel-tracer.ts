/**
 * The OpenTelemetry backend of `tracing.ts`: loaded only when tracing is configured (`app/tracing.ts` requires it
 * after the SDK started), so with tracing off no OpenTelemetry package is loaded.
 */
import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
} from '@opentelemetry/api';
import { ERROR_TYPE, HISHO } from './genai';
import type { SpanAttributes, SpanOptions, StepWatch, TraceSpan, TracingBackend } from './tracing';

const KINDS: Record<NonNullable<SpanOptions['kind']>, SpanKind> = {
  internal: SpanKind.INTERNAL,
  client: SpanKind.CLIENT,
  server: SpanKind.SERVER,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
};

function clean(attributes: SpanAttributes | undefined): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(attributes ?? {})) if (v !== undefined && v !== null) out[k] = v;
  return out;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The span context of a W3C `traceparent` (version 00), or undefined when it is not one. Written and read here,
 * not by the configured propagators: what is stored with a work item does not depend on `OTEL_PROPAGATORS`.
 */
export function spanContextOf(traceparent: string | null | undefined): SpanContext | undefined {
  const m = TRACEPARENT.exec(traceparent ?? '');
  if (!m) return undefined;
  const sc: SpanContext = { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16) & 1, isRemote: true };
  return trace.isSpanContextValid(sc) ? sc : undefined;
}

/** A span context as a W3C `traceparent`. */
export function traceparentOf(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-0${sc.traceFlags & 1}`;
}

/** The code or class of an error, never its message (which may quote what a person wrote). */
export function errorType(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown } | null;
  if (e && typeof e.code === 'string') return e.code;
  if (e && typeof e.name === 'string') return e.name;
  return 'unknown';
}

class OtelSpan implements TraceSpan {
  constructor(readonly span: Span) {}
  set(attributes: SpanAttributes): void {
    this.span.setAttributes(clean(attributes));
  }
  link(traceparent: string | null | undefined, attributes?: SpanAttributes): void {
    const target = spanContextOf(traceparent);
    if (target) this.span.addLink({ context: target, attributes: clean(attributes) });
  }
  fail(err: unknown): void {
    const type = errorType(err);
    this.span.setAttribute(ERROR_TYPE, type);
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: type });
  }
}

export interface OtelTracerOptions {
  captureContent: boolean;
  /** The instrumentation scope's version (Hisho's). */
  version?: string;
}

/** The backend over the global tracer provider (set by the SDK). */
export function otelTracingBackend(opts: OtelTracerOptions): TracingBackend {
  const tracer = trace.getTracer('hisho', opts.version);

  const inSpan = <T>(name: string, o: SpanOptions, fn: (span: TraceSpan) => Promise<T>): Promise<T> => {
    let parent: Context = context.active();
    const remote = spanContextOf(o.parent);
    if (remote) parent = trace.setSpanContext(ROOT_CONTEXT, remote);
    const span = tracer.startSpan(name, { kind: KINDS[o.kind ?? 'internal'], attributes: clean(o.attributes) }, parent);
    const s = new OtelSpan(span);
    return context
      .with(trace.setSpan(parent, span), () => fn(s))
      .then(
        (r) => {
          span.end();
          return r;
        },
        (err: unknown) => {
          s.fail(err);
          span.end();
          throw err;
        },
      );
  };

  const stepWatch =
    (prefix: string): StepWatch =>
    <R>(name: string, run: (leave: <T>(next: () => Promise<T>) => Promise<T>) => Promise<R>): Promise<R> => {
      const parent = context.active();
      const span = tracer.startSpan(`${prefix} ${name}`, { attributes: { [HISHO.stepName]: name } }, parent);
      let open = true;
      const end = () => {
        if (open) {
          open = false;
          span.end();
        }
      };
      const leave = <T>(next: () => Promise<T>): Promise<T> => {
        end();
        return context.with(parent, next);
      };
      return context
        .with(trace.setSpan(parent, span), () => run(leave))
        .then(
          (r) => {
            end();
            return r;
          },
          (err: unknown) => {
            // An error of a later step passes through this one's promise after this span ended: not this step's.
            if (open) new OtelSpan(span).fail(err);
            end();
            throw err;
          },
        );
    };

  return {
    inSpan,
    stepWatch,
    captureContent: opts.captureContent,
    traceparent() {
      const sc = trace.getSpanContext(context.active());
      return sc && trace.isSpanContextValid(sc) ? traceparentOf(sc) : undefined;
    },
  };
}
