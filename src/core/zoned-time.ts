/**
 * Calendar arithmetic in an IANA time zone using only Intl (no date library). Calendar days are
 * handled as UTC midnights so that adding days never crosses a DST edge.
 */

/** A calendar date (month 1–12). */
export interface YMD {
  y: number;
  m: number;
  d: number;
}

/** Wall-clock parts of an instant in a time zone; `weekday` 0 = Monday … 6 = Sunday. */
export interface ZonedParts extends YMD {
  hh: number;
  mm: number;
  weekday: number;
}

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      weekday: 'short',
    });
    formatters.set(timezone, f);
  }
  return f;
}

/** The last answer per zone, by UTC minute: a turn asks for the parts of the same "now" many times. */
const lastParts = new Map<string, { minute: number; parts: ZonedParts }>();
/** From here on every zone's offset is whole minutes, so parts depend on the UTC minute alone. */
const WHOLE_MINUTE_OFFSETS_FROM = Date.UTC(1980, 0, 1);

/** Wall-clock parts of `instant` in `timezone`. Throws RangeError for an unknown zone. */
export function zonedParts(instant: Date, timezone: string): ZonedParts {
  const t = instant.getTime();
  if (t < WHOLE_MINUTE_OFFSETS_FROM) return computeParts(instant, timezone);
  const minute = Math.floor(t / 60_000);
  const last = lastParts.get(timezone);
  if (last?.minute === minute) return { ...last.parts };
  const computed = computeParts(instant, timezone);
  lastParts.set(timezone, { minute, parts: computed });
  return { ...computed };
}

/** `YYYY/MM/DD HH:mm` in `timezone`, as operators read a time (/admin, admin alerts). */
export function localMinute(instant: Date, timezone: string): string {
  const p = zonedParts(instant, timezone);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${p.y}/${two(p.m)}/${two(p.d)} ${two(p.hh)}:${two(p.mm)}`;
}

function computeParts(instant: Date, timezone: string): ZonedParts {
  const parts: Record<string, string> = {};
  for (const p of formatter(timezone).formatToParts(instant)) parts[p.type] = p.value;
  return {
    y: Number(parts.year),
    m: Number(parts.month),
    d: Number(parts.day),
    hh: Number(parts.hour) % 24,
    mm: Number(parts.minute),
    weekday: WEEKDAYS.indexOf(parts.weekday ?? ''),
  };
}

/** True when y-m-d is a real calendar date. */
export function isValidYMD({ y, m, d }: YMD): boolean {
  if (!Number.isInteger(y) || !Number.isInteger(m) || !Number.isInteger(d)) return false;
  if (m < 1 || m > 12 || d < 1) return false;
  return d <= daysInMonth(y, m);
}

/** Number of days in month `m` (1–12) of year `y`. */
export function daysInMonth(y: number, m: number): number {
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}

/** `date` plus `n` calendar days (n may be negative). */
export function addDays(date: YMD, n: number): YMD {
  const t = new Date(Date.UTC(date.y, date.m - 1, date.d + n));
  return { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate() };
}

/** Whole calendar days from `a` to `b` (positive when b is later). */
export function daysBetween(a: YMD, b: YMD): number {
  return Math.round((Date.UTC(b.y, b.m - 1, b.d) - Date.UTC(a.y, a.m - 1, a.d)) / 86_400_000);
}

/** Weekday of a calendar date, 0 = Monday … 6 = Sunday. */
export function weekdayOf(date: YMD): number {
  return (new Date(Date.UTC(date.y, date.m - 1, date.d)).getUTCDay() + 6) % 7;
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** `YYYY-MM-DD`. */
export function formatYMD({ y, m, d }: YMD): string {
  return `${pad(y, 4)}-${pad(m)}-${pad(d)}`;
}

/** `YYYY-MM-DD` of an instant in a time zone. */
export function localDate(instant: Date, timezone: string): string {
  return formatYMD(zonedParts(instant, timezone));
}

/** Parses `YYYY-MM-DD` (strict) into a valid date, or undefined. */
export function parseYMD(s: string): YMD | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return undefined;
  const date = { y: Number(m[1]), m: Number(m[2]), d: Number(m[3]) };
  return isValidYMD(date) ? date : undefined;
}

/** Offset of `timezone` from UTC at `instant`, in minutes (e.g. +540 for Asia/Tokyo). */
export function offsetMinutes(instant: Date, timezone: string): number {
  const p = zonedParts(instant, timezone);
  const asUtc = Date.UTC(p.y, p.m - 1, p.d, p.hh, p.mm);
  return Math.round((asUtc - Math.floor(instant.getTime() / 60_000) * 60_000) / 60_000);
}

/** `YYYY-MM-DDTHH:mm:00±hh:mm` for a wall-clock time in `timezone`. */
export function formatZonedDateTime(date: YMD, time: string, timezone: string): string {
  const [hh = 0, mm = 0] = time.split(':').map(Number);
  const wall = Date.UTC(date.y, date.m - 1, date.d, hh, mm);
  let offset = offsetMinutes(new Date(wall), timezone);
  offset = offsetMinutes(new Date(wall - offset * 60_000), timezone);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return `${formatYMD(date)}T${time}:00${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}
