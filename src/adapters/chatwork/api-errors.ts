import { AppError } from '../../core/app-error';

/**
 * Building ChatWork API errors: status and ChatWork's `errors` array are kept for diagnosis; the API
 * token never is, even if a server or runtime message echoes it.
 */

/** ChatWork's `{"errors": [...]}` body, limited in size; anything else gives an empty list. */
export async function readChatworkErrors(res: { text(): Promise<string> }): Promise<string[]> {
  try {
    const body: unknown = JSON.parse(await res.text());
    const errors = (body as { errors?: unknown }).errors;
    if (!Array.isArray(errors)) return [];
    return errors.slice(0, 5).map((e) => String(e).slice(0, 200));
  } catch {
    return [];
  }
}

/** The `code` of a network error (`ECONNRESET`…): on the error itself (node:http) or on its cause (undici). */
export function networkErrorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = e?.cause?.code ?? e?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * An `EXTERNAL_API_FAILED` error whose message starts with "ChatWork API". The cause keeps a network
 * error's name and code only: its message and cause chain are not ours to log.
 */
export function chatworkApiError(
  message: string,
  apiToken: string,
  opts: { retryAfterMs?: number; cause?: unknown; uncertain?: boolean } = {},
): AppError {
  const safe = apiToken ? message.split(apiToken).join('[SECRET]') : message;
  const cause = opts.cause instanceof Error ? { name: opts.cause.name, code: networkErrorCode(opts.cause) } : undefined;
  const { retryAfterMs, uncertain } = opts;
  return new AppError('EXTERNAL_API_FAILED', `ChatWork API ${safe}`, { retryAfterMs, cause, uncertain });
}

/**
 * Network errors after which a request surely never reached ChatWork (nothing to reconcile): the
 * connection was refused or the host could not be resolved or reached. Timeouts and resets are not
 * among them — the request may have been processed.
 */
const NEVER_ARRIVED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** True when `err` (a network failure) proves the request was never received. */
export function surelyNotSent(err: unknown): boolean {
  const code = networkErrorCode(err);
  return code !== undefined && NEVER_ARRIVED.has(code);
}
