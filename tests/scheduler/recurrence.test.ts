import { duePeriod } from '../../src/scheduler/chat-schedules';
import { anchorRule, describeRule, nextOccurrences, RecurrenceRule } from '../../src/scheduler/recurrence';

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
    expect(describeRule(rule({ freq: 'weekly', days: ['mon'], time: '09:00', holiday: 'next' }))).toBe(
      '毎週月曜 9:00（休日は翌営業日）',
    );
    expect(
      describeRule(rule({ freq: 'monthly', nth: { n: 2, weekday: 'tue' }, time: '10:00', holiday: 'ignore' })),
    ).toBe('毎月第2火曜 10:00');
    expect(describeRule(rule({ freq: 'monthly', day: 'last', time: '17:00', holiday: 'previous' }))).toBe(
      '毎月月末 17:00（休日は前営業日）',
    );
    expect(describeRule(rule({ freq: 'interval', everyMinutes: 120 }))).toBe('営業日の9:00〜18:00 2時間ごと');
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

  it('renders the rules people ask for in Japanese and in English (issue 40)', () => {
    const both = (r: unknown) => [describeRule(rule(r), 'ja'), describeRule(rule(r), 'en')];
    expect(both({ freq: 'monthly', day: [15, 1], time: '09:00', holiday: 'next' })).toEqual([
      '毎月1日・15日 9:00（休日は翌営業日）',
      'Monthly on the 1st and 15th at 9:00 (on a day off: the next business day)',
    ]);
    const wed = (n: number) => ({ n, weekday: 'wed' });
    expect(both({ freq: 'monthly', nth: [wed(4), wed(2)], time: '10:00' })).toEqual([
      '毎月第2・第4水曜 10:00（土日祝・休業日はお休み）',
      'Monthly on the 2nd and 4th Wednesday at 10:00 (not on weekends, holidays or closing days)',
    ]);
    expect(
      both({
        freq: 'monthly',
        nth: [
          { n: 1, weekday: 'mon' },
          { n: -1, weekday: 'fri' },
        ],
        time: '10:00',
        holiday: 'ignore',
      }),
    ).toEqual(['毎月第1月曜・最終金曜 10:00', 'Monthly on the 1st Monday and last Friday at 10:00']);
    expect(both({ freq: 'weekly', days: ['mon'], weeks: 2, start: '2026-11-30', time: '09:00' })).toEqual([
      '隔週月曜 9:00（土日祝・休業日はお休み）',
      'Every other Monday at 9:00 (not on weekends, holidays or closing days)',
    ]);
    expect(
      both({ freq: 'weekly', days: ['tue', 'fri'], weeks: 3, start: '2026-12-01', time: '09:00', holiday: 'ignore' }),
    ).toEqual(['3週ごとの火・金曜 9:00', 'Every 3 weeks on Tuesday and Friday at 9:00']);
    expect(both({ freq: 'monthly', bday: 3, time: '09:00' })).toEqual([
      '毎月第3営業日 9:00',
      'Monthly on the 3rd business day at 9:00',
    ]);
    expect(both({ freq: 'monthly', bday: -1, time: '17:00' })).toEqual([
      '毎月最終営業日 17:00',
      'Monthly on the last business day at 17:00',
    ]);
  });

  it('毎月1日と15日: the 1st of January (元日, 年末年始休業) moves to the next business day', () => {
    expect(days({ freq: 'monthly', day: [1, 15], time: '09:00', holiday: 'next' }, '2026-11-20T10:00', 5)).toEqual([
      '2026-12-01 09:00',
      '2026-12-15 09:00',
      '2027-01-04 09:00',
      '2027-01-15 09:00',
      '2027-02-01 09:00',
    ]);
  });

  it('第2・第4水曜: both Wednesdays of each month', () => {
    const wed = (n: number) => ({ n, weekday: 'wed' });
    expect(days({ freq: 'monthly', nth: [wed(2), wed(4)], time: '10:00' }, '2026-11-20T10:00', 5)).toEqual([
      '2026-11-25 10:00',
      '2026-12-09 10:00',
      '2026-12-23 10:00',
      '2027-01-13 10:00',
      '2027-01-27 10:00',
    ]);
  });

  it('隔週月曜 said on a Wednesday starts next Monday; 成人の日 (1/11) is skipped or moved to Tuesday', () => {
    const said = tokyo('2026-11-25T10:00');
    const skip = anchorRule(rule({ freq: 'weekly', days: ['mon'], weeks: 2, time: '09:00' }), said, TZ, cal);
    expect(skip).toMatchObject({ start: '2026-11-30' });
    const run = (r: RecurrenceRule, n: number) =>
      nextOccurrences(r, said, n, TZ, cal).map((d) => d.toLocaleString('sv-SE', { timeZone: TZ }).slice(0, 16));
    expect(run(skip, 5)).toEqual([
      '2026-11-30 09:00',
      '2026-12-14 09:00',
      '2026-12-28 09:00',
      '2027-01-25 09:00',
      '2027-02-08 09:00',
    ]);
    expect(run(rule({ ...skip, holiday: 'next' }), 4)).toEqual([
      '2026-11-30 09:00',
      '2026-12-14 09:00',
      '2026-12-28 09:00',
      '2027-01-12 09:00',
    ]);
    // Said on a Monday before 9:00 it starts that day; after 9:00, the next Monday.
    const monday = rule({ freq: 'weekly', days: ['mon'], weeks: 2, time: '09:00' });
    expect(anchorRule(monday, tokyo('2026-11-30T08:00'), TZ, cal)).toMatchObject({ start: '2026-11-30' });
    expect(anchorRule(monday, tokyo('2026-11-30T09:30'), TZ, cal)).toMatchObject({ start: '2026-12-07' });
    // Said on Friday 11/20: Monday 11/23 is 勤労感謝の日 — skipped, the first run is 11/30; moved, it is 11/24.
    expect(anchorRule(monday, tokyo('2026-11-20T10:00'), TZ, cal)).toMatchObject({ start: '2026-11-30' });
    expect(anchorRule(rule({ ...monday, holiday: 'next' }), tokyo('2026-11-20T10:00'), TZ, cal)).toMatchObject({
      start: '2026-11-23',
    });
  });

  it('毎月第3営業日 counts business days: 11/3 文化の日, 年始休業 and ゴールデンウィーク are not counted', () => {
    expect(days({ freq: 'monthly', bday: 3, time: '09:00' }, '2026-11-01T00:00', 4)).toEqual([
      '2026-11-05 09:00',
      '2026-12-03 09:00',
      '2027-01-06 09:00',
      '2027-02-03 09:00',
    ]);
    expect(days({ freq: 'monthly', bday: 3, time: '09:00' }, '2027-04-20T00:00', 2)).toEqual([
      '2027-05-10 09:00',
      '2027-06-03 09:00',
    ]);
  });

  it('月末の営業日: December ends on 12/28 (年末年始休業), January on Friday 1/29', () => {
    expect(days({ freq: 'monthly', bday: -1, time: '17:00' }, '2026-12-01T00:00', 4)).toEqual([
      '2026-12-28 17:00',
      '2027-01-29 17:00',
      '2027-02-26 17:00',
      '2027-03-31 17:00',
    ]);
  });

  it('a start date: 「来月から毎週月曜」 has no run before it', () => {
    expect(days({ freq: 'weekly', days: ['mon'], time: '09:00', start: '2026-12-01' }, '2026-11-20T10:00', 2)).toEqual([
      '2026-12-07 09:00',
      '2026-12-14 09:00',
    ]);
  });

  it('a rule stored before lists (one day, one nth weekday) still reads', () => {
    expect(rule({ freq: 'monthly', day: 25, time: '10:00' })).toMatchObject({ day: [25] });
    expect(rule({ freq: 'monthly', nth: { n: 2, weekday: 'tue' }, time: '10:00' })).toMatchObject({
      nth: [{ n: 2, weekday: 'tue' }],
    });
  });

  it('rejects rules the tools must not store', () => {
    expect(RecurrenceRule.safeParse({ freq: 'monthly', day: [1], bday: 3, time: '09:00' }).success).toBe(false);
    expect(RecurrenceRule.safeParse({ freq: 'monthly', bday: 0, time: '09:00' }).success).toBe(false);
    expect(RecurrenceRule.safeParse({ freq: 'weekly', days: ['mon'], weeks: 5, time: '09:00' }).success).toBe(false);
    expect(RecurrenceRule.safeParse({ freq: 'daily', time: '09:00', start: '来月' }).success).toBe(false);
    expect(RecurrenceRule.safeParse({ freq: 'weekly', days: [], time: '09:00' }).success).toBe(false);
    expect(RecurrenceRule.safeParse({ freq: 'daily', time: '25:00' }).success).toBe(false);
    expect(
      RecurrenceRule.safeParse({ freq: 'monthly', day: 5, nth: { n: 1, weekday: 'mon' }, time: '09:00' }).success,
    ).toBe(false);
  });
});
