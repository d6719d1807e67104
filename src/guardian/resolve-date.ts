/**
 * Resolves the date expressions people use in chat (「明日15時」, 「来週金曜」, "next friday", 2026/12/1)
 * into an organisation-local calendar date (and time) — priority 7 normalisation. Pure: the clock and
 * the time zone are inputs. Weeks start on Monday (Japanese business convention).
 */
import {
  addBusinessDays,
  firstBusinessDayOnOrAfter,
  lastBusinessDayOnOrBefore,
  NATIONAL_CALENDAR,
  nextBusinessDay,
  type BusinessCalendar,
} from '../core/business-calendar';
import {
  addDays,
  daysBetween,
  daysInMonth,
  formatYMD,
  isValidYMD,
  weekdayOf,
  zonedParts,
  type YMD,
} from '../core/zoned-time';

/** Result of {@link resolveDate}: a `YYYY-MM-DD` date and optional `HH:mm`, or failure. */
export type ResolvedDate = { ok: true; date: string; time?: string } | { ok: false };

const JA_WEEKDAYS = '月火水木金土日';
const EN_WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const EN_WEEKDAY_RE =
  '(monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)';

const pad = (n: number): string => String(n).padStart(2, '0');

/** Monday of the week containing `day`, shifted by `weeks`, plus `weekday` (0 = Monday). */
function weekDay(today: YMD, weeks: number, weekday: number): YMD {
  return addDays(today, -weekdayOf(today) + 7 * weeks + weekday);
}

/** The next `weekday` on or after today. */
function nextOccurrence(today: YMD, weekday: number): YMD {
  return addDays(today, (weekday - weekdayOf(today) + 7) % 7);
}

function enWeekday(token: string): number {
  return EN_WEEKDAYS.findIndex((w) => w.startsWith(token.slice(0, 3)));
}

function monthEnd(today: YMD, months: number): YMD {
  const first = new Date(Date.UTC(today.y, today.m - 1 + months, 1));
  const y = first.getUTCFullYear();
  const m = first.getUTCMonth() + 1;
  return { y, m, d: daysInMonth(y, m) };
}

function inMonth(today: YMD, months: number, d: number): YMD {
  const first = new Date(Date.UTC(today.y, today.m - 1 + months, 1));
  return { y: first.getUTCFullYear(), m: first.getUTCMonth() + 1, d };
}

/** End of the business week: Friday, or today when the weekend has already started. */
function weekEnd(today: YMD, weeks: number): YMD {
  if (weeks === 0 && weekdayOf(today) > 4) return today;
  return weekDay(today, weeks, 4);
}

/** The first business day of the year: this year's while it is still ahead in January, else next year's. */
function newYearFirstBusinessDay(today: YMD, cal: BusinessCalendar): YMD {
  const thisYear = firstBusinessDayOnOrAfter({ y: today.y, m: 1, d: 1 }, cal);
  if (today.m === 1 && daysBetween(today, thisYear) >= 0) return thisYear;
  return firstBusinessDayOnOrAfter({ y: today.y + 1, m: 1, d: 1 }, cal);
}

const monthOffset = (word: string | undefined): number => (word === '来月' || word === 'next' ? 1 : 0);

type DateRule = [RegExp, (m: RegExpExecArray, today: YMD, cal: BusinessCalendar) => YMD];
const n = (s: string | undefined): number => Number(s);

/** Date expressions, tested against the lower-cased NFKC date part (anchored). */
const DATE_RULES: DateRule[] = [
  [/^(?:今日|本日|きょう|today)$/, (_, t) => t],
  [/^(?:明日|あした|あす|tomorrow)$/, (_, t) => addDays(t, 1)],
  [/^(?:明後日|あさって|(?:the )?day after tomorrow)$/, (_, t) => addDays(t, 2)],
  [/^(?:昨日|きのう|yesterday)$/, (_, t) => addDays(t, -1)],
  [/^(\d{1,3})日後$/, (m, t) => addDays(t, n(m[1]))],
  [/^in (\d{1,3}) days?$/, (m, t) => addDays(t, n(m[1]))],
  [/^(\d{1,3})営業日後$/, (m, t, cal) => addBusinessDays(t, n(m[1]), cal)],
  [/^in (\d{1,3}) (?:business|working) days?$/, (m, t, cal) => addBusinessDays(t, n(m[1]), cal)],
  [/^(?:次の営業日|翌営業日|next (?:business|working) day)$/, (_, t, cal) => nextBusinessDay(t, cal)],
  [
    /^(?:年明け|年始|新年)の?(?:最初の|初)?営業日$|^(?:仕事始め|first (?:business|working) day of (?:the )?(?:new|next) year)$/,
    (_, t, cal) => newYearFirstBusinessDay(t, cal),
  ],
  [
    /^(今月|来月)?の?(?:月?末の?(?:最終)?営業日|最終営業日)$|^last (?:business|working) day of (?:the |this )?(next )?month$/,
    (m, t, cal) => lastBusinessDayOnOrBefore(monthEnd(t, monthOffset(m[1] ?? m[2]?.trim())), cal),
  ],
  [
    /^(今月|来月)の?(?:最初の営業日|初営業日|第1営業日)$/,
    (m, t, cal) => firstBusinessDayOnOrAfter(inMonth(t, monthOffset(m[1]), 1), cal),
  ],
  [/^(?:週明け|来週の?最初の営業日)$/, (_, t, cal) => firstBusinessDayOnOrAfter(weekDay(t, 1, 0), cal)],
  [/^(\d{1,2})週間後$/, (m, t) => addDays(t, 7 * n(m[1]))],
  [/^in (\d{1,2}) weeks?$/, (m, t) => addDays(t, 7 * n(m[1]))],
  [
    /^(今週|来週|再来週)の?([月火水木金土日])(?:曜日?)?$/,
    (m, t) => weekDay(t, ['今週', '来週', '再来週'].indexOf(m[1] ?? ''), JA_WEEKDAYS.indexOf(m[2] ?? '')),
  ],
  [/^([月火水木金土日])曜日?$/, (m, t) => nextOccurrence(t, JA_WEEKDAYS.indexOf(m[1] ?? ''))],
  [
    new RegExp(`^(this|next|coming)? ?${EN_WEEKDAY_RE}$`),
    (m, t) => {
      const wd = enWeekday(m[2] ?? '');
      if (m[1] === 'next') return weekDay(t, 1, wd);
      if (m[1] === 'this') return weekDay(t, 0, wd);
      return nextOccurrence(t, wd);
    },
  ],
  [/^(?:今週末|週末|this weekend|end of (?:the |this )?week)$/, (_, t) => weekEnd(t, 0)],
  [/^(?:来週末|end of next week)$/, (_, t) => weekEnd(t, 1)],
  [/^(?:今月末|月末|end of (?:the |this )?month)$/, (_, t) => monthEnd(t, 0)],
  [/^(?:来月末|end of next month)$/, (_, t) => monthEnd(t, 1)],
  [/^来月(\d{1,2})日$/, (m, t) => inMonth(t, 1, n(m[1]))],
  [/^(?:今月)?(\d{1,2})日$/, (m, t) => inMonth(t, 0, n(m[1]))],
  [/^(\d{4})[/.年-](\d{1,2})[/.月-](\d{1,2})日?$/, (m) => ({ y: n(m[1]), m: n(m[2]), d: n(m[3]) })],
  [/^来年(\d{1,2})[/月](\d{1,2})日?$/, (m, t) => ({ y: t.y + 1, m: n(m[1]), d: n(m[2]) })],
  [/^(\d{1,2})[/月](\d{1,2})日?$/, (m, t) => ({ y: t.y, m: n(m[1]), d: n(m[2]) })],
];

/** 24-hour clock from an optional 午前/午後/am/pm marker. */
function toClock(marker: string | undefined, h: number, min: number): string | undefined {
  let hour = h;
  if (marker === '午後' || marker === 'pm') hour = h < 12 ? h + 12 : h;
  else if (marker === '午前' || marker === 'am') hour = h === 12 ? 0 : h;
  if (marker && h > 12) return undefined;
  if (hour > 23 || min > 59) return undefined;
  return `${pad(hour)}:${pad(min)}`;
}

type TimeRule = [RegExp, (m: RegExpExecArray) => string | undefined];

/** Time suffixes, tested against the end of the expression. */
const TIME_RULES: TimeRule[] = [
  [
    /(午前|午後|am|pm)?\s*(?<!\d)(\d{1,2})時(?:(半)|(\d{1,2})分)?$/,
    (m) => toClock(m[1], n(m[2]), m[3] ? 30 : m[4] ? n(m[4]) : 0),
  ],
  [/(?<![\d:])(\d{1,2}):(\d{2})\s*(am|pm)?$/, (m) => toClock(m[3], n(m[1]), n(m[2]))],
  [/(?<!\d)(\d{1,2})\s*(am|pm)$/, (m) => toClock(m[2], n(m[1]), 0)],
  [/正午$/, () => '12:00'],
];

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[t ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(z|[+-]\d{2}:?\d{2})?)?$/;

function resolveIso(s: string, timezone: string): ResolvedDate | undefined {
  const m = ISO_DATE_TIME.exec(s);
  if (!m) return undefined;
  if (m[6]) {
    const instant = new Date(s.toUpperCase().replace(' ', 'T'));
    if (Number.isNaN(instant.getTime())) return { ok: false };
    const p = zonedParts(instant, timezone);
    return { ok: true, date: formatYMD(p), time: `${pad(p.hh)}:${pad(p.mm)}` };
  }
  const date = { y: n(m[1]), m: n(m[2]), d: n(m[3]) };
  if (!isValidYMD(date)) return { ok: false };
  if (m[4] === undefined) return { ok: true, date: formatYMD(date) };
  const time = toClock(undefined, n(m[4]), n(m[5]));
  return time ? { ok: true, date: formatYMD(date), time } : { ok: false };
}

/** Removes 「まで」「までに」「中」「頃」 and English "by"/"until" around the expression. */
function stripDeadlineWords(s: string): string {
  let out = s.replace(/^(?:by|until|due|on)\s+/, '');
  for (let prev = ''; prev !== out;) {
    prev = out;
    out = out.replace(/(?:までに|まで|迄|中|頃|ごろ|に|、|,)$/, '').trim();
  }
  return out;
}

/**
 * Resolves `expr` relative to `now` in `timezone` (IANA). Supports ISO dates / date-times (offsets are
 * converted to the zone), 今日/本日, 明日/あした, 明後日/あさって, 昨日, N日後, N週間後, 今週/来週/再来週 +
 * weekday, a bare weekday (next occurrence, today included), 週末/今週末/来週末 (Friday; today on a
 * weekend), 月末/来月末, (来月)D日, M/D, M月D日 (same year), YYYY/M/D, YYYY年M月D日, times such as
 * 15時, 15時半, 15:00, 午後3時, 3pm, and English today/tomorrow/next friday (Friday of next week)/
 * this friday/in N days. On the organisation's business `calendar` (national holidays and weekends unless
 * given): N営業日後 (from the next business day), 次の営業日/翌営業日, 年明け/年始の最初の営業日 (this January's
 * while it is ahead), (今月/来月の)月末の営業日/最終営業日, 今月/来月の最初の営業日, 週明け (next week's first
 * business day), and their English forms. Anything else, an impossible date or an unknown time zone →
 * `{ ok: false }` (「来週の平日」 names several days, not one: it is not a date).
 */
export function resolveDate(
  expr: string,
  now: Date,
  timezone: string,
  calendar: BusinessCalendar = NATIONAL_CALENDAR,
): ResolvedDate {
  try {
    const s = expr.normalize('NFKC').trim().toLowerCase().replace(/\s+/g, ' ');
    if (s.length === 0 || s.length > 60) return { ok: false };
    const iso = resolveIso(s, timezone);
    if (iso) return iso;
    let rest = stripDeadlineWords(s);
    let time: string | undefined;
    for (const [re, toTime] of TIME_RULES) {
      const m = re.exec(rest);
      if (!m) continue;
      time = toTime(m);
      if (!time) return { ok: false };
      rest = rest
        .slice(0, m.index)
        .replace(/(?:\s*\bat|[の\s,、])+$/, '')
        .trim();
      break;
    }
    const today = zonedParts(now, timezone);
    if (rest.length === 0) return time ? { ok: true, date: formatYMD(today), time } : { ok: false };
    for (const [re, toDate] of DATE_RULES) {
      const m = re.exec(rest);
      if (!m) continue;
      const date = toDate(m, { y: today.y, m: today.m, d: today.d }, calendar);
      if (!isValidYMD(date)) return { ok: false };
      return time ? { ok: true, date: formatYMD(date), time } : { ok: true, date: formatYMD(date) };
    }
    return { ok: false };
  } catch {
    return { ok: false };
  }
}
