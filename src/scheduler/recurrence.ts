/**
 * Recurrence rules of chat-made schedules (「毎週月曜9時」「平日の17時」「毎月1日と15日」「第2・第4水曜」「隔週月曜」
 * 「毎月第3営業日」「月末の営業日」「営業時間中2時間ごと」): a small structured rule the model fills, checked with zod,
 * rendered back in Japanese or English for the confirmation question, and stepped on the organisation's business
 * calendar with a holiday policy. Pure: no clock, no database. Minute resolution, wall-clock times in the
 * schedule's time zone.
 *
 * A small module rather than an RRULE library (rrule.js): RRULE expresses 1日と15日, 第2・第4水曜 and 隔週 but has no
 * business days — no 第3営業日, no 月末の営業日, no 「祝日なら翌営業日」, no organisation closing days (年末年始) —
 * which are the cases people ask for here; each would still be our code around the library, and a stored RRULE
 * string would be one more format to render back in Japanese.
 */
import { z } from 'zod';
import {
  businessDayOfMonth,
  firstBusinessDayOnOrAfter,
  isBusinessDay,
  lastBusinessDayOnOrBefore,
  type BusinessCalendar,
} from '../core/business-calendar';
import {
  addDays,
  daysBetween,
  daysInMonth,
  formatYMD,
  formatZonedDateTime,
  parseYMD,
  weekdayOf,
  zonedParts,
  type YMD,
} from '../core/zoned-time';

export const WEEKDAY_CODES = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type WeekdayCode = (typeof WEEKDAY_CODES)[number];
const WEEKDAY_JA = ['月', '火', '水', '木', '金', '土', '日'];
const WEEKDAY_EN = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

const HHMM = z
  .string()
  .trim()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'a time of day as HH:MM (24h)');

/** What happens to an occurrence that falls on a weekend, a national holiday or a closing day. */
export const HOLIDAY_POLICIES = ['skip', 'previous', 'next', 'ignore'] as const;
export type HolidayPolicy = (typeof HOLIDAY_POLICIES)[number];
const holiday = z
  .enum(HOLIDAY_POLICIES)
  .default('skip')
  .describe(
    'On a weekend, national holiday or company closing day: skip it, previous = the business day before, ' +
      'next = the business day after, ignore = send anyway.',
  );

/** Which days an interval rule (「2時間ごと」) runs on. */
const DAY_SETS = ['every_day', 'weekdays', 'business_days'] as const;

/** One value or a list of them: a rule stored before lists, or a model that sends one value, reads as a list. */
export function listOf<T extends z.ZodType>(item: T, max?: number) {
  const list = max === undefined ? z.array(item) : z.array(item).min(1).max(max);
  return z.preprocess((v) => (v === undefined || Array.isArray(v) ? v : [v]), list);
}

/** A day of the month (31 = the month's last day when shorter), or `last` (月末). */
export const MONTH_DAY = z.union([z.number().int().min(1).max(31), z.literal('last')]);
/** The nth weekday of a month: 第2火曜 = { n: 2, weekday: tue }; n = -1 is the last one (最終金曜). */
export const NTH_WEEKDAY = z.object({
  n: z
    .number()
    .int()
    .min(-1)
    .max(5)
    .refine((n) => n !== 0),
  weekday: z.enum(WEEKDAY_CODES),
});
/** The nth business day of a month (第3営業日); -1 is the last one (月末の営業日). */
export const BUSINESS_DAY_N = z
  .number()
  .int()
  .min(-1)
  .max(20)
  .refine((n) => n !== 0);
/** No occurrence before this date (「来月から」; the first week of an every-N-weeks rule). */
const start = z
  .string()
  .trim()
  .refine((s) => parseYMD(s) !== undefined, 'a date as YYYY-MM-DD')
  .optional();

/**
 * The rule as stored and as the tools accept it. `minMinutes` is the shortest interval allowed: the
 * chat tools ask for at least 30 minutes, the store accepts any whole number of minutes.
 */
export function recurrenceSchema(minMinutes: number) {
  return z.discriminatedUnion('freq', [
    z.object({ freq: z.literal('daily'), time: HHMM, holiday: z.literal('ignore').default('ignore'), start }),
    z.object({ freq: z.literal('weekdays'), time: HHMM, holiday, start }),
    z.object({ freq: z.literal('business_days'), time: HHMM, start }),
    z.object({
      freq: z.literal('weekly'),
      days: z.array(z.enum(WEEKDAY_CODES)).min(1).max(7),
      /** Every N weeks (隔週 = 2), counted from the week of `start`. */
      weeks: z.number().int().min(1).max(4).optional(),
      time: HHMM,
      holiday,
      start,
    }),
    z.object({
      freq: z.literal('monthly'),
      /** Exactly one of: days of the month, nth weekdays, the nth business day. */
      day: listOf(MONTH_DAY, 31).optional(),
      nth: listOf(NTH_WEEKDAY, 10).optional(),
      bday: BUSINESS_DAY_N.optional(),
      time: HHMM,
      holiday,
      start,
    }),
    z.object({
      freq: z.literal('interval'),
      everyMinutes: z.number().int().min(minMinutes).max(720),
      /** Office hours: the first run of the day and the latest one (both included). */
      from: HHMM.default('09:00'),
      until: HHMM.default('18:00'),
      on: z.enum(DAY_SETS).default('business_days'),
      start,
    }),
  ]);
}

/** The rules the store accepts with intervals of `minMinutes` and up, each kind complete. */
export function checkedRecurrence(minMinutes: number) {
  return recurrenceSchema(minMinutes).superRefine((r, ctx) => {
    if (r.freq === 'monthly' && [r.day, r.nth, r.bday].filter((x) => x !== undefined).length !== 1) {
      ctx.addIssue({ code: 'custom', message: 'a monthly rule needs exactly one of day, nth or bday' });
    }
    if (r.freq === 'interval' && r.from > r.until)
      ctx.addIssue({ code: 'custom', message: 'from must be before until' });
  });
}

/** Any rule the store accepts (intervals of one minute and up). */
export const RecurrenceRule = checkedRecurrence(1);
export type RecurrenceRule = z.output<typeof RecurrenceRule>;

/**
 * An every-N-weeks rule counts its weeks from `start`; a rule made without one starts on its first date after
 * `now` that runs (「隔週月曜」 said on a Wednesday: next Monday, or the one after when next Monday is a holiday
 * skipped), then every N weeks from that week.
 */
export function anchorRule(rule: RecurrenceRule, now: Date, timezone: string, cal: BusinessCalendar): RecurrenceRule {
  if (rule.freq !== 'weekly' || (rule.weeks ?? 1) < 2 || rule.start) return rule;
  const p = zonedParts(now, timezone);
  const today = { y: p.y, m: p.m, d: p.d };
  const late = p.hh * 60 + p.mm >= toMin(rule.time);
  for (let i = late ? 1 : 0; i < SEARCH_DAYS; i++) {
    const date = addDays(today, i);
    if (rule.days.includes(WEEKDAY_CODES[weekdayOf(date)]!) && actualDate(rule, date, cal))
      return { ...rule, start: formatYMD(date) };
  }
  return rule;
}

const toMin = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
const hhmm = (min: number): string =>
  `${String(Math.floor(min / 60)).padStart(2, '0')}:${String(min % 60).padStart(2, '0')}`;
const clock = (t: string): string => `${Number(t.slice(0, 2))}:${t.slice(3, 5)}`;

const HOLIDAY_JA: Record<HolidayPolicy, string> = {
  skip: '（土日祝・休業日はお休み）',
  previous: '（休日は前営業日）',
  next: '（休日は翌営業日）',
  ignore: '',
};
const HOLIDAY_EN: Record<HolidayPolicy, string> = {
  skip: ' (not on weekends, holidays or closing days)',
  previous: ' (on a day off: the business day before)',
  next: ' (on a day off: the next business day)',
  ignore: '',
};

const ordinal = (n: number): string => {
  const t = n % 100 >= 11 && n % 100 <= 13 ? 0 : n % 10;
  return `${n}${t === 1 ? 'st' : t === 2 ? 'nd' : t === 3 ? 'rd' : 'th'}`;
};
const andList = (items: string[]): string =>
  items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
const weekdayIndex = (d: WeekdayCode): number => WEEKDAY_CODES.indexOf(d);
type NthWeekday = z.output<typeof NTH_WEEKDAY>;
/** Days of the month in order, 月末 last. */
const sortedDays = (days: readonly (number | 'last')[]) =>
  [...new Set(days)].sort((a, b) => (a === 'last' ? 32 : a) - (b === 'last' ? 32 : b));
/** Nth weekdays grouped by weekday, in weekday order, each group's n in order (最終 last). */
function nthGroups(nth: readonly NthWeekday[]): { weekday: WeekdayCode; ns: number[] }[] {
  const by = new Map<WeekdayCode, number[]>();
  for (const x of nth) by.set(x.weekday, [...new Set([...(by.get(x.weekday) ?? []), x.n])]);
  return [...by.entries()]
    .sort(([a], [b]) => weekdayIndex(a) - weekdayIndex(b))
    .map(([weekday, ns]) => ({ weekday, ns: ns.sort((a, b) => (a === -1 ? 9 : a) - (b === -1 ? 9 : b)) }));
}

/**
 * The rule as the confirmation question shows it: 「毎週月曜 9:00（休日は翌営業日）」, 「毎月1日・15日 9:00」,
 * 「毎月第2・第4水曜 10:00」, 「隔週月曜 9:00」, 「毎月第3営業日 9:00」, 「毎月最終営業日 17:00」,
 * 「営業日の9:00〜18:00 2時間ごと」 — or in English ("Every other Monday at 9:00").
 */
export function describeRule(rule: RecurrenceRule, lang: 'ja' | 'en' = 'ja'): string {
  return lang === 'en' ? describeEn(rule) : describeJa(rule);
}

function describeJa(rule: RecurrenceRule): string {
  switch (rule.freq) {
    case 'daily':
      return `毎日 ${clock(rule.time)}`;
    case 'weekdays':
      return `平日（月〜金）${clock(rule.time)}${rule.holiday === 'skip' ? '（祝日・休業日はお休み）' : HOLIDAY_JA[rule.holiday]}`;
    case 'business_days':
      return `営業日 ${clock(rule.time)}（土日祝・休業日を除く）`;
    case 'weekly': {
      const days = WEEKDAY_CODES.filter((d) => rule.days.includes(d)).map((d) => WEEKDAY_JA[weekdayIndex(d)]);
      const policy =
        rule.days.every((d) => d === 'sat' || d === 'sun') && rule.holiday === 'skip' ? '' : HOLIDAY_JA[rule.holiday];
      const weeks = rule.weeks ?? 1;
      const every = weeks === 1 ? '毎週' : weeks === 2 ? '隔週' : `${weeks}週ごとの`;
      return `${every}${days.join('・')}曜 ${clock(rule.time)}${policy}`;
    }
    case 'monthly': {
      let day: string;
      if (rule.bday !== undefined) {
        return `毎月${rule.bday === -1 ? '最終営業日' : `第${rule.bday}営業日`} ${clock(rule.time)}`;
      } else if (rule.nth) {
        day = nthGroups(rule.nth)
          .map(
            (g) =>
              `${g.ns.map((n) => (n === -1 ? '最終' : `第${n}`)).join('・')}${WEEKDAY_JA[weekdayIndex(g.weekday)]}曜`,
          )
          .join('・');
      } else
        day = sortedDays(rule.day ?? [])
          .map((d) => (d === 'last' ? '月末' : `${d}日`))
          .join('・');
      return `毎月${day} ${clock(rule.time)}${HOLIDAY_JA[rule.holiday]}`;
    }
    case 'interval': {
      const on = { every_day: '毎日', weekdays: '平日', business_days: '営業日' }[rule.on];
      const every = rule.everyMinutes % 60 === 0 ? `${rule.everyMinutes / 60}時間ごと` : `${rule.everyMinutes}分ごと`;
      return `${on}の${clock(rule.from)}〜${clock(rule.until)} ${every}`;
    }
  }
}

function describeEn(rule: RecurrenceRule): string {
  const at = (t: string) => `at ${clock(t)}`;
  switch (rule.freq) {
    case 'daily':
      return `Every day ${at(rule.time)}`;
    case 'weekdays': {
      const policy = rule.holiday === 'skip' ? ' (not on holidays or closing days)' : HOLIDAY_EN[rule.holiday];
      return `Weekdays (Mon–Fri) ${at(rule.time)}${policy}`;
    }
    case 'business_days':
      return `Business days ${at(rule.time)} (not weekends, holidays or closing days)`;
    case 'weekly': {
      const days = andList(WEEKDAY_CODES.filter((d) => rule.days.includes(d)).map((d) => WEEKDAY_EN[weekdayIndex(d)]!));
      const policy =
        rule.days.every((d) => d === 'sat' || d === 'sun') && rule.holiday === 'skip' ? '' : HOLIDAY_EN[rule.holiday];
      const weeks = rule.weeks ?? 1;
      const every =
        weeks === 1 ? `Every ${days}` : weeks === 2 ? `Every other ${days}` : `Every ${weeks} weeks on ${days}`;
      return `${every} ${at(rule.time)}${policy}`;
    }
    case 'monthly': {
      let day: string;
      if (rule.bday !== undefined) {
        return `Monthly on the ${rule.bday === -1 ? 'last' : ordinal(rule.bday)} business day ${at(rule.time)}`;
      } else if (rule.nth) {
        day = andList(
          nthGroups(rule.nth).map(
            (g) =>
              `${andList(g.ns.map((n) => (n === -1 ? 'last' : ordinal(n))))} ${WEEKDAY_EN[weekdayIndex(g.weekday)]}`,
          ),
        );
      } else day = andList(sortedDays(rule.day ?? []).map((d) => (d === 'last' ? 'last day' : ordinal(d))));
      return `Monthly on the ${day} ${at(rule.time)}${HOLIDAY_EN[rule.holiday]}`;
    }
    case 'interval': {
      const on = { every_day: 'every day', weekdays: 'on weekdays', business_days: 'on business days' }[rule.on];
      const every =
        rule.everyMinutes % 60 === 0
          ? `Every ${rule.everyMinutes === 60 ? 'hour' : `${rule.everyMinutes / 60} hours`}`
          : `Every ${rule.everyMinutes} minutes`;
      return `${every} ${clock(rule.from)}–${clock(rule.until)} ${on}`;
    }
  }
}

/** Monday of the week `date` is in. */
const weekOf = (date: YMD): YMD => addDays(date, -weekdayOf(date));

/**
 * Does `date` carry an occurrence before the holiday policy? `anchor`: the Monday of the first week of an
 * every-N-weeks rule.
 */
function nominal(rule: RecurrenceRule, date: YMD, cal: BusinessCalendar, anchor: YMD): boolean {
  const wd = weekdayOf(date);
  switch (rule.freq) {
    case 'daily':
      return true;
    case 'weekdays':
      return wd < 5;
    case 'business_days':
      return isBusinessDay(date, cal);
    case 'weekly': {
      if (!rule.days.includes(WEEKDAY_CODES[wd]!)) return false;
      const weeks = rule.weeks ?? 1;
      return weeks === 1 || (((daysBetween(anchor, weekOf(date)) / 7) % weeks) + weeks) % weeks === 0;
    }
    case 'monthly': {
      if (rule.bday !== undefined) {
        const b = isBusinessDay(date, cal) ? businessDayOfMonth(date.y, date.m, rule.bday, cal) : undefined;
        return b !== undefined && b.d === date.d;
      }
      const last = daysInMonth(date.y, date.m);
      if (rule.nth) {
        return rule.nth.some(
          (x) => WEEKDAY_CODES[wd] === x.weekday && (x.n === -1 ? date.d + 7 > last : Math.ceil(date.d / 7) === x.n),
        );
      }
      return (rule.day ?? []).some((d) => date.d === (d === 'last' ? last : Math.min(d, last)));
    }
    case 'interval':
      return rule.on === 'every_day' ? true : rule.on === 'weekdays' ? wd < 5 : isBusinessDay(date, cal);
  }
}

/** The date a nominal occurrence really happens on, after the holiday policy (null: skipped). */
function actualDate(rule: RecurrenceRule, date: YMD, cal: BusinessCalendar): YMD | null {
  if (rule.freq === 'interval' || rule.freq === 'business_days') return date;
  if (rule.freq === 'monthly' && rule.bday !== undefined) return date;
  if (rule.holiday === 'ignore' || isBusinessDay(date, cal)) return date;
  if (rule.holiday === 'skip') return null;
  return rule.holiday === 'previous' ? lastBusinessDayOnOrBefore(date, cal) : firstBusinessDayOnOrAfter(date, cal);
}

/** Times of day (minutes) a rule fires on an occurrence date. */
function timesOfDay(rule: RecurrenceRule): number[] {
  if (rule.freq !== 'interval') return [toMin(rule.time)];
  const out: number[] = [];
  for (let t = toMin(rule.from); t <= toMin(rule.until); t += rule.everyMinutes) out.push(t);
  return out;
}

/** How far a holiday policy can move an occurrence (年末年始 + a long weekend), in days. */
const SHIFT_DAYS = 16;
/** A rule with no occurrence within this many days has none (a 第5月曜 exists every few months). */
const SEARCH_DAYS = 400;

/**
 * The first occurrence strictly after `after`, or null when there is none within about a year.
 * Several nominal dates moved onto the same business day (two holidays in a row, 「翌営業日」) are one occurrence.
 * Times of day are minutes after the day's local midnight (a day with a daylight-saving change is off by its shift).
 */
export function nextOccurrence(
  rule: RecurrenceRule,
  after: Date,
  timezone: string,
  cal: BusinessCalendar,
): Date | null {
  const p = zonedParts(after, timezone);
  // Only 「前営業日」 moves an occurrence earlier than its nominal date: look back for it only then.
  const back = 'holiday' in rule && rule.holiday === 'previous' ? SHIFT_DAYS : 1;
  const today = { y: p.y, m: p.m, d: p.d };
  const from = addDays(today, -back);
  const first = rule.start ? formatYMD(parseYMD(rule.start)!) : '';
  // A stored every-N-weeks rule always has its start (anchorRule); without one its weeks count from today's.
  const anchor = weekOf(rule.start ? parseYMD(rule.start)! : today);
  const times = timesOfDay(rule);
  const limit = after.getTime();
  let best: number | null = null;
  for (let i = 0; i < SEARCH_DAYS + back; i++) {
    const date = addDays(from, i);
    // No later nominal date can land before `best` (only 「前営業日」 moves one earlier, by at most SHIFT_DAYS).
    if (best !== null && Date.UTC(date.y, date.m - 1, date.d) > best + (back + 1) * 86_400_000) break;
    if ((first && formatYMD(date) < first) || !nominal(rule, date, cal, anchor)) continue;
    const actual = actualDate(rule, date, cal);
    if (!actual) continue;
    const midnight = instantAt(actual, 0, timezone).getTime();
    const t = times.find((m) => midnight + m * 60_000 > limit);
    if (t !== undefined && (best === null || midnight + t * 60_000 < best)) best = midnight + t * 60_000;
  }
  return best === null ? null : new Date(best);
}

function instantAt(date: YMD, minuteOfDay: number, timezone: string): Date {
  return new Date(formatZonedDateTime(date, hhmm(minuteOfDay), timezone));
}

/** Up to `n` next occurrences after `after` (for the confirmation question and list_schedules). */
export function nextOccurrences(
  rule: RecurrenceRule,
  after: Date,
  n: number,
  timezone: string,
  cal: BusinessCalendar,
): Date[] {
  const out: Date[] = [];
  let t = after;
  for (let i = 0; i < n; i++) {
    const next = nextOccurrence(rule, t, timezone, cal);
    if (!next) break;
    out.push(next);
    t = next;
  }
  return out;
}
