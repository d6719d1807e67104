/**
 * Dates of the goal capabilities (target dates, due dates of goal tasks), stored like the tasks
 * capability stores them: a bare date is the end of that local day. The Guardian normally hands over ISO
 * values (`date` role); nested task dues are not normalised by it, so relative expressions such as
 * 「来週金曜」 are still read here.
 */
import { resolveDate } from '../src/guardian/resolve-date';
import { ToolError } from '../src/tools/types';
import { END_OF_DAY, parseWhen } from './_when';

/**
 * Reads an ISO date / date-time (or a relative Japanese / English date expression) in `timezone`.
 * @throws ToolError naming `param` when the value cannot be read.
 */
export function parseDateParam(value: string, now: Date, timezone: string, param: string): Date {
  const direct = parseWhen(value, timezone, END_OF_DAY);
  if (direct) return direct.at;
  const r = resolveDate(value, now, timezone);
  const resolved = r.ok ? parseWhen(r.time ? `${r.date}T${r.time}` : r.date, timezone, END_OF_DAY) : null;
  if (resolved) return resolved.at;
  throw new ToolError(`Cannot read ${param} "${value.slice(0, 40)}"; use YYYY-MM-DD.`, 'INVALID_DATE');
}
