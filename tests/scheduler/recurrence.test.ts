import { duePeriod } from '../../src/scheduler/chat-schedules';
import { describeRuleJa, nextOccurrences, RecurrenceRule } from '../../src/scheduler/recurrence';

const TZ = 'Asia/Tokyo';
const cal = { closingDays: [{ name: '年末年始休業', from: '12-29', to: '01-03' }] };
const rule = (r: unknown) => RecurrenceRule.parse(r);
const tokyo = (iso: string) => new Date(`${iso}+09:00`);
const days = (r: unknown, from: string, n: number) =>
  nextOccurrences(rule(r), tokyo(from), n, TZ, cal).map((d) =>
    d.toLocaleString('sv-SE', { timeZone: TZ }).slice(0, 16),
  );

describe('recurrence rules on the business calendar', () => {
  it('renders rules in Japanese as the confirmation question shows them', () => {
    expect(describeRuleJa(rule({ freq: 'weekly', days: ['mon'], time: '09:00', holiday: 'next' }))).toBe(
      '毎週月曜 9:00（休日は翌営業日）',
    );
    expect(
      describeRuleJa(rule({ freq: 'monthly', nth: { n: 2, weekday: 'tue' }, time: '10:00', holiday: 'ignore' })),
    ).toBe('毎月第2火曜 10:00');
    expect(describeRuleJa(rule({ freq: 'monthly', day: 'last', time: '17:00', holiday: 'previous' }))).toBe(
      '毎月月末 17:00（休日は前営業日）',
    );
    expect(describeRuleJa(rule({ freq: 'interval', everyMinutes: 120 }))).toBe('営業日の9:00〜18:00 2時間ごと');
  });

  it('weekly on Monday, holiday → next business day: 勤労感謝の日 11/23 moves to Tuesday 11/24', () => {
    expect(days({ freq: 'weekly', days: ['mon'], time: '09:00', holiday: 'next' }, '2026-11-16T10:00', 3)).toEqual([
      '2026-11-24 09:00',
      '2026-11-30 09:00',
      '2026-12-07 09:00',
    ]);
  });

  it('weekly on Monday, holiday skipped: no run that week', () => {
    expect(days({ freq: 'weekly', days: ['mon'], time: '09:00' }, '2026-11-16T10:00', 2)).toEqual([
      '2026-11-30 09:00',
      '2026-12-07 09:00',
    ]);
  });

  it('月末 with previous business day: December closes on 12/28 (年末年始休業), January 31 is a Sunday', () => {
    expect(days({ freq: 'monthly', day: 'last', time: '17:00', holiday: 'previous' }, '2026-12-01T00:00', 3)).toEqual([
      '2026-12-28 17:00',
      '2027-01-29 17:00',
      '2027-02-26 17:00',
    ]);
  });

  it('day 31 in a short month is its last day; 第2火曜 and 最終金曜', () => {
    expect(days({ freq: 'monthly', day: 31, time: '09:00', holiday: 'ignore' }, '2027-01-31T10:00', 2)).toEqual([
      '2027-02-28 09:00',
      '2027-03-31 09:00',
    ]);
    expect(days({ freq: 'monthly', nth: { n: 2, weekday: 'tue' }, time: '10:00' }, '2026-11-01T00:00', 2)).toEqual([
      '2026-11-10 10:00',
      '2026-12-08 10:00',
    ]);
    expect(days({ freq: 'monthly', nth: { n: -1, weekday: 'fri' }, time: '16:00' }, '2026-12-01T00:00', 2)).toEqual([
      '2026-12-25 16:00',
      '2027-01-29 16:00',
    ]);
  });

  it('business days skip weekends, national holidays and the year-end closing', () => {
    expect(days({ freq: 'business_days', time: '09:00' }, '2026-12-25T10:00', 3)).toEqual([
      '2026-12-28 09:00',
      '2027-01-04 09:00',
      '2027-01-05 09:00',
    ]);
  });

  it('every two hours within office hours, business days only', () => {
    expect(days({ freq: 'interval', everyMinutes: 120, from: '09:00', until: '13:00' }, '2026-11-20T12:00', 3)).toEqual(
      ['2026-11-20 13:00', '2026-11-24 09:00', '2026-11-24 11:00'],
    );
  });

  it('a missed stretch is one due period (the newest) and the count of those before it', () => {
    const r = rule({ freq: 'daily', time: '09:00' });
    const res = duePeriod(r, tokyo('2026-11-20T09:00'), tokyo('2026-11-23T12:00'), TZ, cal);
    expect(res.period).toEqual(tokyo('2026-11-23T09:00'));
    expect(res.count).toBe(4);
    expect(res.following).toEqual(tokyo('2026-11-24T09:00'));
  });

  it('rejects rules the tools must not store', () => {
    expect(RecurrenceRule.safeParse({ freq: 'weekly', days: [], time: '09:00' }).success).toBe(false);
    expect(RecurrenceRule.safeParse({ freq: 'daily', time: '25:00' }).success).toBe(false);
    expect(
      RecurrenceRule.safeParse({ freq: 'monthly', day: 5, nth: { n: 1, weekday: 'mon' }, time: '09:00' }).success,
    ).toBe(false);
  });
});
