/**
 * What we log about a Discord failure. discord.js errors (DiscordAPIError) carry the request body —
 * message text — so only names and codes are logged, never the error object itself.
 */

/** The loggable part of an error: name, Discord/HTTP codes, no message bodies. */
export interface ErrorSummary {
  name: string;
  code?: string | number;
  status?: number;
}

/**
 * Reduces an error to fields that are safe to log.
 *
 * @param err - Anything thrown.
 * @returns Name plus `code`/`status` when present.
 */
export function summarizeError(err: unknown): ErrorSummary {
  if (!(err instanceof Error)) return { name: typeof err };
  const summary: ErrorSummary = { name: err.name };
  const { code, status } = err as { code?: unknown; status?: unknown };
  if (typeof code === 'string' || typeof code === 'number') summary.code = code;
  if (typeof status === 'number') summary.status = status;
  return summary;
}
