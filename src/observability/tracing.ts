/**
 * Tracing (issue 43): how the stages make spans without knowing whether tracing is on. With no `OTEL_*` variable
 * set nothing is installed and every function here costs a null check: {@link inSpan} calls its function with a
 * span that records nothing, and no OpenTelemetry package is loaded. `app/tracing.ts` installs the OpenTelemetry
 * backend (`otel-tracer.ts`) at start when the operator configured an exporter.
 *
 * Span and attribute names follow the GenAI semantic conventions and live in `genai.ts`.
 */

/** Attribute values a span takes; `undefined` and `null` are left out. */
export type SpanAttributes = Record<string, string | number | boolean | string[] | undefined | null>;

/** A span as the stages see it. */
export interface TraceSpan {
  /** Adds attributes (undefined and null values are left out). */
  set(attributes: SpanAttributes): void;
  /** Links this span to another one (a W3C `traceparent`), e.g. the turn that asked the question answered now. */
  link(traceparent: string | null | undefined, attributes?: SpanAttributes): void;
  /** Marks the span failed: `error.type` is the error's code or class; its message is not recorded. */
  fail(err: unknown): void;
}

export interface SpanOptions {
  kind?: 'internal' | 'client' | 'server' | 'producer' | 'consumer';
  /** The parent, as a W3C `traceparent` (the webhook that stored a work item); else the active span. */
  parent?: string | null;
  attributes?: SpanAttributes;
}

/**
 * A list of steps watched one by one (`core/steps.ts`): `run` runs the step's own work; the step calls `leave`
 * with what comes after it, which then runs outside the step's span (so each step's span covers its own work).
 */
export type StepWatch = <R>(
  name: string,
  run: (leave: <T>(next: () => Promise<T>) => Promise<T>) => Promise<R>,
) => Promise<R>;

/** The backend that makes real spans (installed at start when tracing is configured). */
export interface TracingBackend {
  inSpan<T>(name: string, opts: SpanOptions, fn: (span: TraceSpan) => Promise<T>): Promise<T>;
  /** The active span as a W3C `traceparent`, if there is one and it is sampled. */
  traceparent(): string | undefined;
  /** Watches the steps of a list, a span each, named `<prefix> <step>`. */
  stepWatch(prefix: string): StepWatch;
  /** Message text, names and tool arguments go into spans (redacted): the operator opted in. */
  readonly captureContent: boolean;
}

const NOOP_SPAN: TraceSpan = { set: () => undefined, link: () => undefined, fail: () => undefined };

let backend: TracingBackend | null = null;

/** Installs (or, with null, removes) the backend. */
export function installTracing(b: TracingBackend | null): void {
  backend = b;
}

/** Whether spans are being made. */
export function tracingOn(): boolean {
  return backend !== null;
}

/** Runs `fn` in a new span (a child of `opts.parent`, else of the active span); with tracing off, just runs it. */
export function inSpan<T>(name: string, opts: SpanOptions, fn: (span: TraceSpan) => Promise<T>): Promise<T> {
  return backend ? backend.inSpan(name, opts, fn) : fn(NOOP_SPAN);
}

/** The active span as a W3C `traceparent` (stored with a work item, so the turn joins the webhook's trace). */
export function currentTraceparent(): string | undefined {
  return backend?.traceparent();
}

/** A watch that makes a span per step, or undefined when tracing is off. */
export function stepWatch(prefix: string): StepWatch | undefined {
  return backend?.stepWatch(prefix);
}

/** Whether spans may carry message text, names and tool arguments (redacted first). */
export function captureContent(): boolean {
  return backend?.captureContent ?? false;
}
