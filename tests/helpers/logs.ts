import { Writable } from 'node:stream';
import pino from 'pino';
import type { Logger } from '../../src/observability/logger';

/** A real pino logger whose JSON lines are kept for assertions. */
export function captureLogger(level = 'info'): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { logger: pino({ level }, stream), lines };
}
