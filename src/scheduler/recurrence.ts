/**
 * Recurrence rules of chat-made schedules (「毎週月曜9時」「平日の17時」「毎月第2火曜」「月末」「営業時間中2時間ごと」):
 * a small structured rule the model fills, checked with zod, rendered back in Japanese for the confirmation
 * question, and stepped on the organisation's business calendar with a holiday policy. Pure: no clock, no
 * database. Minute resolution, wall-clock times in the schedule's time zone.
 *
 * A small module rather than an RRULE library: RRULE has no business days, no 「祝日なら翌営業日」 and no
 * organisation closing days, which are the cases people ask for; the rule set here is what the tools accept.
 */
import { z } from 'zod';
import {
  firstBusinessDayOnOrAfter,
  isBusinessDay,
  lastBusinessDayOnOrBefore,
  type BusinessCalendar,
} from '../core/business-calendar';
import { addDays, daysInMonth, formatZonedDateTime, weekdayOf, zonedParts, type YMD } from '../core/zoned-time';

export const WEEKDAY_CODES = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type WeekdayCode = (typeof WEEKDAY_CODES)[number];
const WEEKDAY_JA = ['月', '火', '水', '木', '金', '土', '日'];

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

/**
 * The rule as stored and as the tools accept it. `minMinutes` is the shortest interval allowed: the
 * chat tools ask for at least 30 minutes, the store accepts any whole number of minutes.
 */
export function recurrenceSchema(minMinutes: number) {
  return z.discriminatedUnion('freq', [
    z.object({ freq: z.literal('daily'), time: HHMM, holiday: z.literal('ignore').default('ignore') }),
    z.object({ freq: z.literal('weekdays'), time: HHMM, holiday }),
    z.object({ freq: z.literal('business_days'), time: HHMM }),
    z.object({
      freq: z.literal('weekly'),
      days: z.array(z.enum(WEEKDAY_CODES)).min(1).max(7),
      time: HHMM,
      holiday,
    }),
    z.object({
      freq: z.literal('monthly'),
      /** A day of the month (31 = the month's last day when shorter), or `last` (月末). */
      day: z.union([z.number().int().min(1).max(31), z.literal('last')]).optional(),
      /** Or the nth weekday: 第2火曜 = { n: 2, weekday: tue }; n = -1 is the last one (最終金曜). */
      nth: z
        .object({
          n: z
            .number()
            .int()
            .min(-1)
            .max(5)
            .refine((n) => n !== 0),
          weekday: z.enum(WEEKDAY_CODES),
        })
        .optional(),
      time: HHMM,
      holiday,
    }),
    z.object({
      freq: z.literal('interval'),
      everyMinutes: z.number().int().min(minMinutes).max(720),
      /** Office hours: the first run of the day and the latest one (both included). */
      from: HHMM.default('09:00'),
      until: HHMM.default('18:00'),
      on: z.enum(DAY_SETS).default('business_days'),
    }),
  ]);
}

/** Any rule the store accepts (intervals of one minute and up). */
export const RecurrenceRule = recurrenceSchema(1).superRefine((r, ctx) => {
  if (r.freq === 'monthly' && (r.day === undefined) === (r.nth === undefined)) {
    ctx.addIssue({ code: 'custom', message: 'a monthly rule needs exactly one of day or nth' });
  }
  if (r.freq === 'interval' && r.from > r.until) ctx.addIssue({ code: 'custom', message: 'from must be before until' });
});
export type RecurrenceRule = z.output<typeof RecurrenceRule>;

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

/** The rule in Japanese: 「毎週月曜 9:00（休日は翌営業日）」, 「毎月第2火曜 10:00」, 「営業日の9:00〜18:00 2時間ごと」. */
export function describeRuleJa(rule: RecurrenceRule): string {
  switch (rule.freq) {
    case 'daily':
      return `毎日 ${clock(rule.time)}`;
    case 'weekdays':
      return `平日（月〜金）${clock(rule.time)}${rule.holiday === 'skip' ? '（祝日・休業日はお休み）' : HOLIDAY_JA[rule.holiday]}`;
    case 'business_days':
      return `営業日 ${clock(rule.time)}（土日祝・休業日を除く）`;
    case 'weekly': {
      const days = WEEKDAY_CODES.filter((d) => rule.days.includes(d)).map((d) => WEEKDAY_JA[WEEKDAY_CODES.indexOf(d)]);
      const policy =
        rule.days.every((d) => d === 'sat' || d === 'sun') && rule.holiday === 'skip' ? '' : HOLIDAY_JA[rule.holiday];
      return `毎週${days.join('・')}曜 ${clock(rule.time)}${policy}`;
    }
    case 'monthly': {
      let day: string;
      if (rule.nth) {
        const wd = WEEKDAY_JA[WEEKDAY_CODES.indexOf(rule.nth.weekday)];
        day = rule.nth.n === -1 ? `最終${wd}曜` : `第${rule.nth.n}${wd}曜`;
      } else day = rule.day === 'last' ? '月末' : `${rule.day}日`;
      return `毎月${day} ${clock(rule.time)}${HOLIDAY_JA[rule.holiday]}`;
    }
    case 'interval': {
      const on = { every_day: '毎日', weekdays: '平日', business_days: '営業日' }[rule.on];
      const every = rule.everyMinutes % 60 === 0 ? `${rule.everyMinutes / 60}時間ごと` : `${rule.everyMinutes}分ごと`;
      return `${on}の${clock(rule.from)}〜${clock(rule.until)} ${every}`;
    }
  }
}

/** The nominal dates of a rule in a month-or-day walk: does `date` carry an occurrence (before the holiday policy)? */
function nominal(rule: RecurrenceRule, date: YMD, cal: BusinessCalendar): boolean {
  const wd = weekdayOf(date);
  switch (rule.freq) {
    case 'daily':
      return true;
    case 'weekdays':
      return wd < 5;
    case 'business_days':
      return isBusinessDay(date, cal);
    case 'weekly':
      return rule.days.includes(WEEKDAY_CODES[wd]!);
    case 'monthly': {
      const last = daysInMonth(date.y, date.m);
      if (rule.nth) {
        if (WEEKDAY_CODES[wd] !== rule.nth.weekday) return false;
        return rule.nth.n === -1 ? date.d + 7 > last : Math.ceil(date.d / 7) === rule.nth.n;
      }
      const day = rule.day === 'last' ? last : Math.min(rule.day!, last);
      return date.d === day;
    }
    case 'interval':
      return rule.on === 'every_day' ? true : rule.on === 'weekdays' ? wd < 5 : isBusinessDay(date, cal);
  }
}

/** The date a nominal occurrence really happens on, after the holiday policy (null: skipped). */
function actualDate(rule: RecurrenceRule, date: YMD, cal: BusinessCalendar): YMD | null {
  if (rule.freq === 'interval' || rule.freq === 'business_days') return date;
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
  const start = addDays({ y: p.y, m: p.m, d: p.d }, -back);
  const times = timesOfDay(rule);
  const limit = after.getTime();
  let best: number | null = null;
  for (let i = 0; i < SEARCH_DAYS + back; i++) {
    const date = addDays(start, i);
    // No later nominal date can land before `best` (only 「前営業日」 moves one earlier, by at most SHIFT_DAYS).
    if (best !== null && Date.UTC(date.y, date.m - 1, date.d) > best + (back + 1) * 86_400_000) break;
    if (!nominal(rule, date, cal)) continue;
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
