import { addDays, formatZonedDateTime, zonedParts, type YMD } from '../../core/zoned-time';

/** Quiet hours "HH:MM-HH:MM" (may wrap past midnight, e.g. "21:00-08:00"); the directory checks it with this. */
export const QUIET_HOURS_PATTERN = /^([01]\d|2[0-3]):[0-5]\d-([01]\d|2[0-3]):[0-5]\d$/;

/** Quiet hours as minutes of the day; `start > end` wraps past midnight (21:00-08:00). */
export interface QuietHours {
  startMin: number;
  endMin: number;
  /** "HH:MM" of the end, for messages and the zoned instant. */
  end: string;
}

/** Parses "HH:MM-HH:MM"; null for none or a malformed value (the directory rejects those at import). */
export function parseQuietHours(text: string | null | undefined): QuietHours | null {
  if (!text || !QUIET_HOURS_PATTERN.test(text)) return null;
  const [start, end] = text.split('-') as [string, string];
  const min = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
  if (min(start) === min(end)) return null;
  return { startMin: min(start), endMin: min(end), end };
}

/**
 * When `at` falls inside the quiet hours (wall clock in `timezone`), the instant they end; otherwise
 * null (R-P3: a notice due in quiet hours waits until they end).
 */
export function quietUntil(at: Date, quiet: QuietHours | null, timezone: string): Date | null {
  if (!quiet) return null;
  const p = zonedParts(at, timezone);
  const minute = p.hh * 60 + p.mm;
  const today: YMD = { y: p.y, m: p.m, d: p.d };
  const wraps = quiet.startMin > quiet.endMin;
  let endDay: YMD | null = null;
  if (!wraps && minute >= quiet.startMin && minute < quiet.endMin) endDay = today;
  if (wraps && minute < quiet.endMin) endDay = today;
  if (wraps && minute >= quiet.startMin) endDay = addDays(today, 1);
  return endDay ? new Date(formatZonedDateTime(endDay, quiet.end, timezone)) : null;
}
