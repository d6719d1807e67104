import pino, { type Logger } from 'pino';
import { safeRedactText, safeRedactValue } from './redact';

export type { Logger };

/**
 * Structured JSON logs (R-O3). Secrets are removed by path; every string passes PII redaction.
 * Log ids and codes, not bodies: message text is never logged raw.
 */
export function createLogger(level: string, base: Record<string, unknown> = {}): Logger {
  return pino({
    level,
    base: { service: 'hisho', ...base },
    redact: {
      paths: [
        '*.token',
        '*.interaction.token',
        '*.apiKey',
        '*.authorization',
        '*.password',
        '*.databaseUrl',
        'headers.authorization',
        'headers["x-chatworktoken"]',
        'req.headers',
      ],
      censor: '[SECRET]',
    },
    formatters: {
      log(obj) {
        return safeRedactValue(obj) as Record<string, unknown>;
      },
    },
    hooks: {
      logMethod(args, method) {
        // Redact the message string too (the object part is handled by the formatter).
        const redacted = args.map((a) => (typeof a === 'string' ? (safeRedactText(a) ?? '') : a)) as typeof args;
        method.apply(this, redacted);
      },
    },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

/** A logger that writes nothing (tests, benchmarks). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
