/**
 * ISO date / date-time parameters of the tasks and reminders capabilities. The Guardian has already
 * turned relative expressions (「明日15時」) into ISO values; anything else is refused here.
 */
import { formatYMD, offsetMinutes, parseYMD, zonedParts, type YMD } from '../src/core/zoned-time';

/** A point in time read from a parameter; `date` is the organisation-local calendar date. */
export interface ParsedWhen {
  at: Date;
  /** True when the value was a bare `YYYY-MM-DD` (the caller chose the time of day). */
  dateOnly: boolean;
  date: string;
}

const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;
const pad = (n: number): string => String(n).padStart(2, '0');

/** The instant of wall-clock `date` hh:mm:ss in `timezone` (DST-safe: the offset is re-checked). */
export function zonedInstant(date: YMD, hh: number, mm: number, ss: number, timezone: string): Date {
  const wall = Date.UTC(date.y, date.m - 1, date.d, hh, mm, ss);
  let off = offsetMinutes(new Date(wall), timezone);
  off = offsetMinutes(new Date(wall - off * 60_000), timezone);
  return new Date(wall - off * 60_000);
}

function offsetOf(token: string): number {
  if (token.toUpperCase() === 'Z') return 0;
  const sign = token.startsWith('-') ? -1 : 1;
  const digits = token.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4)));
}

/**
 * Reads `YYYY-MM-DD` (placed at `dateOnlyTime` local time) or an ISO date-time with offset (a date-time
 * without offset is read in `timezone`). Returns null for anything else or an impossible date/time.
 */
export function parseWhen(
  value: string,
  timezone: string,
  dateOnlyTime: { hh: number; mm: number; ss: number },
): ParsedWhen | null {
  const v = value.trim();
  const dateOnly = parseYMD(v);
  if (dateOnly) {
    return {
      at: zonedInstant(dateOnly, dateOnlyTime.hh, dateOnlyTime.mm, dateOnlyTime.ss, timezone),
      dateOnly: true,
      date: v,
    };
  }
  const m = DATE_TIME.exec(v);
  if (!m) return null;
  const ymd = parseYMD(m[1]!);
  const [hh, mm, ss] = [Number(m[2]), Number(m[3]), Number(m[4] ?? 0)];
  if (!ymd || hh > 23 || mm > 59 || ss > 59) return null;
  let at: Date;
  if (m[5]) {
    const off = offsetOf(m[5]);
    if (Math.abs(off) > 14 * 60) return null;
    at = new Date(Date.UTC(ymd.y, ymd.m - 1, ymd.d, hh, mm, ss) - off * 60_000);
  } else {
    at = zonedInstant(ymd, hh, mm, ss, timezone);
  }
  return { at, dateOnly: false, date: formatYMD(zonedParts(at, timezone)) };
}

/** `2026-12-01T15:00:00+09:00`: an instant as organisation-local ISO 8601 with offset. */
export function formatLocalIso(at: Date, timezone: string): string {
  const p = zonedParts(at, timezone);
  const off = offsetMinutes(at, timezone);
  const abs = Math.abs(off);
  const zone = `${off < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  return `${formatYMD(p)}T${pad(p.hh)}:${pad(p.mm)}:${pad(at.getUTCSeconds())}${zone}`;
}

/** End of a local day, the time given to date-only due dates. */
export const END_OF_DAY = { hh: 23, mm: 59, ss: 59 } as const;

/** True when a stored due date is a date-only one (23:59:59 local, see {@link END_OF_DAY}). */
export function isDateOnlyDue(at: Date, timezone: string): boolean {
  const p = zonedParts(at, timezone);
  return p.hh === 23 && p.mm === 59 && at.getUTCSeconds() === 59;
}

/** A due date as the model sees it: `YYYY-MM-DD` for date-only dues, local ISO date-time otherwise. */
export function formatDue(at: Date | null, timezone: string): string | null {
  if (!at) return null;
  return isDateOnlyDue(at, timezone) ? formatYMD(zonedParts(at, timezone)) : formatLocalIso(at, timezone);
}
