/**
 * The organisation's business calendar: Monday to Friday, except Japan's national holidays (元日,
 * 振替休日, 国民の休日 … from @holiday-jp/holiday_jp, 1970–2050) and the organisation's own closing days
 * from the directory (年末年始休業 12/29–1/3 …). Pure: calendar dates in, calendar dates out; "today" is
 * the organisation-local date of an instant ({@link calendarDay}).
 */
import holidayJp from '@holiday-jp/holiday_jp';
import { addDays, daysInMonth, formatYMD, weekdayOf, zonedParts, type YMD } from './zoned-time';

/**
 * A closing day or range of the organisation, both ends included: `MM-DD` ends repeat every year (a range
 * may wrap over the year end, 12-29 → 01-03), `YYYY-MM-DD` ends are one date. `to` absent = one day.
 */
export type ClosingDay = {
  name: string;
  from: string;
  to?: string;
};

/** What makes days non-business days besides weekends and national holidays. */
export interface BusinessCalendar {
  closingDays: readonly ClosingDay[];
}

/** National holidays and weekends only. */
export const NATIONAL_CALENDAR: BusinessCalendar = { closingDays: [] };

/** `MM-DD` (every year) or `YYYY-MM-DD` (once). */
export const CLOSING_DAY_PATTERN = /^(?:\d{4}-)?(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])$/;

/** Closing days as stored (a JSON column): well-formed entries only, anything else dropped. */
export function readClosingDays(json: unknown): ClosingDay[] {
  if (!Array.isArray(json)) return [];
  return json.flatMap((c: unknown) => {
    const { name, from, to } = (c ?? {}) as Record<string, unknown>;
    if (typeof name !== 'string' || typeof from !== 'string' || !CLOSING_DAY_PATTERN.test(from)) return [];
    const end = typeof to === 'string' && CLOSING_DAY_PATTERN.test(to) && to.length === from.length ? to : from;
    return [{ name, from, to: end }];
  });
}

/** A search for a business day gives up after this many days (a calendar closed all year is a mistake). */
const SEARCH_LIMIT_DAYS = 400;

const HOLIDAYS: Readonly<Record<string, { name: string } | undefined>> = holidayJp.holidays;
const WEEKDAYS_JA = ['月', '火', '水', '木', '金', '土', '日'];

/** The organisation-local calendar date of `now` in `timezone` (throws RangeError for an unknown zone). */
export function calendarDay(now: Date, timezone: string): YMD {
  const p = zonedParts(now, timezone);
  return { y: p.y, m: p.m, d: p.d };
}

/** 「月」…「日」 for a date. */
export function weekdayJa(date: YMD): string {
  return WEEKDAYS_JA[weekdayOf(date)] ?? '';
}

/** The national holiday on `date` (「勤労感謝の日」, 「振替休日」, 「国民の休日」), or undefined. */
export function holidayName(date: YMD): string | undefined {
  const name = HOLIDAYS[formatYMD(date)]?.name;
  if (name === undefined) return undefined;
  if (name.endsWith('振替休日')) return '振替休日';
  return name === '休日' ? '国民の休日' : name;
}

const monthDay = (s: string): number => Number(s.slice(-5, -3)) * 100 + Number(s.slice(-2));

function inClosing(date: YMD, c: ClosingDay): boolean {
  const to = c.to ?? c.from;
  if (c.from.length === 10) {
    const day = formatYMD(date);
    return c.from <= day && day <= to;
  }
  const md = date.m * 100 + date.d;
  const [a, b] = [monthDay(c.from), monthDay(to)];
  return a <= b ? a <= md && md <= b : md >= a || md <= b;
}

/** The organisation closing day `date` falls in (「年末年始休業」), or undefined. */
export function closingDayName(date: YMD, cal: BusinessCalendar): string | undefined {
  return cal.closingDays.find((c) => inClosing(date, c))?.name;
}

/**
 * Why `date` is not a business day — the closing day's name, the holiday's name, or 「土曜日」/「日曜日」 —
 * or undefined for a business day.
 */
export function nonBusinessReason(date: YMD, cal: BusinessCalendar): string | undefined {
  const wd = weekdayOf(date);
  return closingDayName(date, cal) ?? holidayName(date) ?? (wd >= 5 ? `${weekdayJa(date)}曜日` : undefined);
}

/** True on a weekday that is neither a national holiday nor an organisation closing day. */
export function isBusinessDay(date: YMD, cal: BusinessCalendar): boolean {
  return nonBusinessReason(date, cal) === undefined;
}

function step(date: YMD, dir: 1 | -1, cal: BusinessCalendar, includeStart: boolean): YMD {
  let d = includeStart ? date : addDays(date, dir);
  for (let i = 0; i < SEARCH_LIMIT_DAYS; i++, d = addDays(d, dir)) if (isBusinessDay(d, cal)) return d;
  throw new RangeError(`no business day within ${SEARCH_LIMIT_DAYS} days of ${formatYMD(date)}`);
}

/** `date` when it is a business day, else the next one (年明け最初の営業日 from 1/1). */
export function firstBusinessDayOnOrAfter(date: YMD, cal: BusinessCalendar): YMD {
  return step(date, 1, cal, true);
}

/** `date` when it is a business day, else the previous one (月末の営業日 from the month's last day). */
export function lastBusinessDayOnOrBefore(date: YMD, cal: BusinessCalendar): YMD {
  return step(date, -1, cal, true);
}

/** The first business day after `date` (翌営業日). */
export function nextBusinessDay(date: YMD, cal: BusinessCalendar): YMD {
  return step(date, 1, cal, false);
}

/** The last business day before `date` (前営業日). */
export function previousBusinessDay(date: YMD, cal: BusinessCalendar): YMD {
  return step(date, -1, cal, false);
}

/**
 * The `n`th business day of a month (第3営業日), or its last one for `n` = -1 (月末の営業日); undefined when the
 * month has fewer than `n` business days.
 */
export function businessDayOfMonth(y: number, m: number, n: number, cal: BusinessCalendar): YMD | undefined {
  let d =
    n === -1
      ? lastBusinessDayOnOrBefore({ y, m, d: daysInMonth(y, m) }, cal)
      : firstBusinessDayOnOrAfter({ y, m, d: 1 }, cal);
  for (let i = 1; i < n && d.m === m; i++) d = nextBusinessDay(d, cal);
  return d.m === m && d.y === y ? d : undefined;
}

/**
 * `n` business days after `date` (before it when `n` is negative), counting from the next business day:
 * 3営業日後 on Thursday before a Monday holiday is Wednesday. `n` = 0 is `date` itself.
 */
export function addBusinessDays(date: YMD, n: number, cal: BusinessCalendar): YMD {
  if (!Number.isInteger(n) || Math.abs(n) > 366) throw new RangeError(`business day count out of range: ${n}`);
  let d = date;
  for (let i = 0; i < Math.abs(n); i++) d = n > 0 ? nextBusinessDay(d, cal) : previousBusinessDay(d, cal);
  return d;
}

/** A day that is not a business day, with its reason (see {@link nonBusinessReason}). */
export interface DayOff {
  date: YMD;
  reason: string;
}

/** Holidays and closing days (not plain weekends) from `from` for `days` days, in date order. */
export function daysOffAhead(from: YMD, days: number, cal: BusinessCalendar): DayOff[] {
  const out: DayOff[] = [];
  for (let i = 0; i < days; i++) {
    const date = addDays(from, i);
    const reason = closingDayName(date, cal) ?? holidayName(date);
    if (reason !== undefined) out.push({ date, reason });
  }
  return out;
}

/** 「11/23（月）」. */
export function shortDateJa(date: YMD): string {
  return `${date.m}/${date.d}（${weekdayJa(date)}）`;
}

/** 「11/28は土曜日です」, 「11/23（月）は勤労感謝の日です」, 「12/30（水）は年末年始休業です」. */
export function dayOffNoteJa(date: YMD, reason: string): string {
  const day = reason.endsWith('曜日') ? `${date.m}/${date.d}` : shortDateJa(date);
  return `${day}は${reason}です`;
}

/** Consecutive days off with the same reason as one span: 「12/29（火）〜1/3（日）年末年始休業」. */
function spans(off: readonly DayOff[]): string[] {
  const out: { first: YMD; last: YMD; reason: string }[] = [];
  for (const o of off) {
    const prev = out[out.length - 1];
    if (prev && prev.reason === o.reason && formatYMD(addDays(prev.last, 1)) === formatYMD(o.date)) prev.last = o.date;
    else out.push({ first: o.date, last: o.date, reason: o.reason });
  }
  return out.map((s) => {
    const last = s.first === s.last ? '' : `〜${shortDateJa(s.last)}`;
    return `${shortDateJa(s.first)}${last}${s.reason}`;
  });
}

/**
 * One line for the model about today and the next two weeks, e.g.
 * 「今日 11/22（日）は休日（日曜日）。次の営業日: 11/24（火）。今後14日の祝日・休業日: 11/23（月）勤労感謝の日」.
 */
export function calendarLine(now: Date, timezone: string, cal: BusinessCalendar): string {
  const today = calendarDay(now, timezone);
  const reason = nonBusinessReason(today, cal);
  const status = reason === undefined ? '営業日' : `休日（${reason}）`;
  const off = spans(daysOffAhead(today, 14, cal));
  const ahead = off.length === 0 ? 'なし' : off.join('、');
  const next = shortDateJa(nextBusinessDay(today, cal));
  return `今日 ${shortDateJa(today)}は${status}。次の営業日: ${next}。今後14日の祝日・休業日: ${ahead}`;
}
