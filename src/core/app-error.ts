import { randomBytes } from 'node:crypto';

/** Error categories (R-E1). */
export type ErrorCategory = 'USER' | 'SYSTEM' | 'LLM' | 'VALIDATION' | 'PERMISSION' | 'EXTERNAL';
export type ErrorSeverity = 'low' | 'medium' | 'high' | 'critical';
export type ErrorFallback =
  | 'retry'
  | 'proceed_without_memory'
  | 'request_clarification'
  | 'retry_with_guidance'
  | 'proceed_with_caution'
  | 'none';

/** Stable error codes; each maps to a category and a persona message key in prompts/errors.*.json. */
export const ERROR_CODES = {
  LLM_UNAVAILABLE: { category: 'LLM', severity: 'medium', recoverable: true, fallback: 'retry', layer: 'brain' },
  LLM_RATE_LIMITED: { category: 'LLM', severity: 'medium', recoverable: true, fallback: 'retry', layer: 'brain' },
  LLM_TIMEOUT: { category: 'LLM', severity: 'medium', recoverable: true, fallback: 'retry', layer: 'brain' },
  LLM_INVALID_OUTPUT: {
    category: 'LLM',
    severity: 'medium',
    recoverable: true,
    fallback: 'retry_with_guidance',
    layer: 'brain',
  },
  LLM_NOT_CONFIGURED: { category: 'SYSTEM', severity: 'high', recoverable: false, fallback: 'none', layer: 'brain' },
  LLM_COST_LIMIT: { category: 'SYSTEM', severity: 'high', recoverable: true, fallback: 'none', layer: 'brain' },
  DB_UNAVAILABLE: { category: 'SYSTEM', severity: 'high', recoverable: true, fallback: 'retry', layer: 'state' },
  SESSION_STATE_UNAVAILABLE: {
    category: 'SYSTEM',
    severity: 'high',
    recoverable: true,
    fallback: 'retry',
    layer: 'state',
  },
  EXTERNAL_API_FAILED: {
    category: 'EXTERNAL',
    severity: 'medium',
    recoverable: true,
    fallback: 'retry',
    layer: 'tools',
  },
  VALIDATION_FAILED: {
    category: 'VALIDATION',
    severity: 'low',
    recoverable: true,
    fallback: 'request_clarification',
    layer: 'tools',
  },
  PERMISSION_DENIED: {
    category: 'PERMISSION',
    severity: 'low',
    recoverable: false,
    fallback: 'none',
    layer: 'authorization',
  },
  BUDGET_EXCEEDED: {
    category: 'SYSTEM',
    severity: 'low',
    recoverable: true,
    fallback: 'request_clarification',
    layer: 'brain',
  },
  INTERNAL: { category: 'SYSTEM', severity: 'high', recoverable: true, fallback: 'retry', layer: 'pipeline' },
} as const satisfies Record<
  string,
  { category: ErrorCategory; severity: ErrorSeverity; recoverable: boolean; fallback: ErrorFallback; layer: string }
>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** A short id a user can quote to support ("E-7K2Q9XA"). */
export function newErrorId(): string {
  return (
    'E-' +
    randomBytes(5)
      .toString('base64url')
      .toUpperCase()
      .replace(/[^A-Z0-9]/g, 'X')
      .slice(0, 7)
  );
}

/**
 * The one application error. `message` is internal (logs, redacted); what the user sees comes from the
 * persona's error messages by `code`, never from `message`.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly errorId: string;
  readonly retryAfterMs?: number;
  /**
   * True when a request that changes something may have taken effect although it failed (a timeout or a
   * 5xx answer to a POST): it must not simply be sent again; reconcile first.
   */
  readonly uncertain: boolean;
  /** False when another attempt cannot help (the work queue then fails the item at once). */
  readonly retryable: boolean;
  override readonly cause?: unknown;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { cause?: unknown; retryAfterMs?: number; uncertain?: boolean; retryable?: boolean; errorId?: string } = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.errorId = opts.errorId ?? newErrorId();
    this.retryAfterMs = opts.retryAfterMs;
    this.uncertain = opts.uncertain === true;
    this.retryable = opts.retryable !== false;
    this.cause = opts.cause;
  }

  get category(): ErrorCategory {
    return ERROR_CODES[this.code].category;
  }
}

/**
 * The error a work item gives up with (its last attempt failed): the same code and error id as `err` (what the
 * logs and the person's apology name), never retried.
 */
export function givingUp(err: AppError): AppError {
  return new AppError(err.code, err.message, { cause: err, retryable: false, errorId: err.errorId });
}

/** Wraps anything thrown into an AppError at a pipeline boundary. */
export function asAppError(err: unknown, fallbackCode: ErrorCode = 'INTERNAL'): AppError {
  if (err instanceof AppError) return err;
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return new AppError(fallbackCode, message, { cause: err });
}
