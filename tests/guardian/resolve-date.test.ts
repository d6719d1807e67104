import { resolveDate } from '../../src/guardian';
import type { BusinessCalendar } from '../../src/core/business-calendar';
import { NOW, TZ } from './fixtures';

// NOW = Sunday 2026-11-22 10:00 JST. Weeks start on Monday: this week = 11-16 … 11-22.
describe('resolveDate (fixed clock, Asia/Tokyo)', () => {
  it.each([
    // ISO
    ['2026-12-01', '2026-12-01', undefined],
    ['2026-12-01T09:30', '2026-12-01', '09:30'],
    ['2026-12-01 09:30', '2026-12-01', '09:30'],
    ['2026-11-30T06:00:00Z', '2026-11-30', '15:00'],
    ['2026-11-30T23:30:00+00:00', '2026-12-01', '08:30'],
    // relative days
    ['今日', '2026-11-22', undefined],
    ['本日', '2026-11-22', undefined],
    ['今日中', '2026-11-22', undefined],
    ['明日', '2026-11-23', undefined],
    ['あした', '2026-11-23', undefined],
    ['明後日', '2026-11-24', undefined],
    ['あさって', '2026-11-24', undefined],
    ['昨日', '2026-11-21', undefined],
    ['3日後', '2026-11-25', undefined],
    ['１０日後', '2026-12-02', undefined],
    ['2週間後', '2026-12-06', undefined],
    // weeks and weekdays
    ['来週金曜', '2026-11-27', undefined],
    ['来週の金曜日', '2026-11-27', undefined],
    ['来週月曜', '2026-11-23', undefined],
    ['今週金曜', '2026-11-20', undefined],
    ['今週の日曜', '2026-11-22', undefined],
    ['再来週水曜', '2026-12-02', undefined],
    ['金曜', '2026-11-27', undefined],
    ['日曜日', '2026-11-22', undefined],
    ['週末', '2026-11-22', undefined],
    ['今週末', '2026-11-22', undefined],
    ['来週末', '2026-11-27', undefined],
    // months
    ['月末', '2026-11-30', undefined],
    ['今月末', '2026-11-30', undefined],
    ['来月末', '2026-12-31', undefined],
    ['来月5日', '2026-12-05', undefined],
    ['25日', '2026-11-25', undefined],
    // absolute
    ['12/25', '2026-12-25', undefined],
    ['12月25日', '2026-12-25', undefined],
    ['1/5', '2026-01-05', undefined],
    ['2027/1/5', '2027-01-05', undefined],
    ['2027年1月5日', '2027-01-05', undefined],
    ['来年1月5日', '2027-01-05', undefined],
    // times
    ['明日15時', '2026-11-23', '15:00'],
    ['明日の15時まで', '2026-11-23', '15:00'],
    ['明日 15:30', '2026-11-23', '15:30'],
    ['明日午後3時', '2026-11-23', '15:00'],
    ['午前9時', '2026-11-22', '09:00'],
    ['15時半', '2026-11-22', '15:30'],
    ['15時10分', '2026-11-22', '15:10'],
    ['15:00', '2026-11-22', '15:00'],
    ['来週金曜17時', '2026-11-27', '17:00'],
    ['12/25 18:00', '2026-12-25', '18:00'],
    ['明日正午', '2026-11-23', '12:00'],
    // English
    ['today', '2026-11-22', undefined],
    ['Tomorrow', '2026-11-23', undefined],
    ['next friday', '2026-11-27', undefined],
    ['this friday', '2026-11-20', undefined],
    ['friday', '2026-11-27', undefined],
    ['by tomorrow 3pm', '2026-11-23', '15:00'],
    ['tomorrow at 9:30 am', '2026-11-23', '09:30'],
    ['in 3 days', '2026-11-25', undefined],
  ])('%s → %s %s', (expr, date, time) => {
    expect(resolveDate(expr, NOW, TZ)).toEqual(time ? { ok: true, date, time } : { ok: true, date });
  });

  it.each([
    [''],
    ['そのうち'],
    ['来週'],
    ['2026-02-30'],
    ['2/30'],
    ['25:00'],
    ['午後13時'],
    ['2026-11-30T25:00'],
    ['month'],
    ['x'.repeat(100)],
  ])('%j is not a date', (expr) => {
    expect(resolveDate(expr, NOW, TZ)).toEqual({ ok: false });
  });

  it('uses the organisation time zone for "today"', () => {
    const lateUtc = new Date('2026-11-22T20:00:00Z'); // 2026-11-23 05:00 JST, 15:00 in New York
    expect(resolveDate('今日', lateUtc, 'Asia/Tokyo')).toEqual({ ok: true, date: '2026-11-23' });
    expect(resolveDate('today', lateUtc, 'America/New_York')).toEqual({ ok: true, date: '2026-11-22' });
  });

  it('handles month and year ends', () => {
    const dec31 = new Date('2026-12-31T12:00:00+09:00');
    expect(resolveDate('明日', dec31, TZ)).toEqual({ ok: true, date: '2027-01-01' });
    expect(resolveDate('来月末', dec31, TZ)).toEqual({ ok: true, date: '2027-01-31' });
    expect(resolveDate('来月末', new Date('2028-01-15T12:00:00+09:00'), TZ)).toEqual({ ok: true, date: '2028-02-29' });
  });

  it('weekday expressions from a Wednesday', () => {
    const wed = new Date('2026-11-25T10:00:00+09:00');
    expect(resolveDate('今週金曜', wed, TZ)).toEqual({ ok: true, date: '2026-11-27' });
    expect(resolveDate('来週金曜', wed, TZ)).toEqual({ ok: true, date: '2026-12-04' });
    expect(resolveDate('週末', wed, TZ)).toEqual({ ok: true, date: '2026-11-27' });
    expect(resolveDate('水曜', wed, TZ)).toEqual({ ok: true, date: '2026-11-25' });
  });

  it('fails closed on an unknown time zone', () => {
    expect(resolveDate('明日', NOW, 'Mars/Olympus')).toEqual({ ok: false });
  });
});

describe('resolveDate on the business calendar (national holidays, weekends, closing days)', () => {
  const YEAR_END: BusinessCalendar = { closingDays: [{ name: '年末年始休業', from: '12-29', to: '01-03' }] };
  const at = (iso: string) => new Date(iso);
  const THU_BEFORE_HOLIDAY = at('2026-11-19T10:00:00+09:00'); // Monday 11/23 is 勤労感謝の日

  it.each([
    // said on Thursday 2026-11-19: Friday 11/20, (weekend, 勤労感謝の日 11/23), Tuesday 11/24, Wednesday 11/25
    ['3営業日後', THU_BEFORE_HOLIDAY, '2026-11-25', undefined],
    ['1営業日後', THU_BEFORE_HOLIDAY, '2026-11-20', undefined],
    ['2営業日後の15時', THU_BEFORE_HOLIDAY, '2026-11-24', '15:00'],
    ['in 3 business days', THU_BEFORE_HOLIDAY, '2026-11-25', undefined],
    ['週明け', THU_BEFORE_HOLIDAY, '2026-11-24', undefined],
    // said on Sunday 2026-11-22 (NOW): Monday is a holiday
    ['次の営業日', NOW, '2026-11-24', undefined],
    ['翌営業日の10時', NOW, '2026-11-24', '10:00'],
    ['next business day', NOW, '2026-11-24', undefined],
    // Friday 23:30 JST is still Friday: the next business day is Monday
    ['翌営業日', at('2026-11-27T23:30:00+09:00'), '2026-11-30', undefined],
    ['明日', at('2026-11-27T23:30:00+09:00'), '2026-11-28', undefined],
    // around 5/3–5/6 (振替休日 5/6)
    ['次の営業日', at('2026-05-01T18:00:00+09:00'), '2026-05-07', undefined],
    // month ends
    ['月末の営業日', NOW, '2026-11-30', undefined],
    ['今月の最終営業日', at('2027-02-15T10:00:00+09:00'), '2027-02-26', undefined],
    ['来月末の営業日', at('2026-09-10T10:00:00+09:00'), '2026-10-30', undefined],
    ['来月の最初の営業日', at('2026-12-10T10:00:00+09:00'), '2027-01-04', undefined],
    ['last business day of the month', at('2026-05-10T10:00:00+09:00'), '2026-05-29', undefined],
    // the year end, national holidays only: 1/1 (金) 元日, 1/2–3 weekend
    ['年明け最初の営業日', at('2026-12-30T16:00:00+09:00'), '2027-01-04', undefined],
    ['年始の最初の営業日の9時', at('2026-12-30T16:00:00+09:00'), '2027-01-04', '09:00'],
    ['仕事始め', at('2026-11-22T10:00:00+09:00'), '2027-01-04', undefined],
    // said on 1/2 the first business day is this year's, said on 1/5 next year's
    ['年明け最初の営業日', at('2027-01-02T10:00:00+09:00'), '2027-01-04', undefined],
    ['年明け最初の営業日', at('2027-01-05T10:00:00+09:00'), '2028-01-03', undefined], // 2028-01-01 is a Saturday
  ])('%s said at %s → %s %s', (expr, now, date, time) => {
    expect(resolveDate(expr, now, TZ)).toEqual(time ? { ok: true, date, time } : { ok: true, date });
  });

  it('counts the organisation closing days (年末年始休業 12/29–1/3)', () => {
    const mon = at('2026-12-28T10:00:00+09:00');
    expect(resolveDate('翌営業日', mon, TZ, YEAR_END)).toEqual({ ok: true, date: '2027-01-04' });
    expect(resolveDate('翌営業日', mon, TZ)).toEqual({ ok: true, date: '2026-12-29' });
    expect(resolveDate('3営業日後', at('2026-12-25T10:00:00+09:00'), TZ, YEAR_END)).toEqual({
      ok: true,
      date: '2027-01-05',
    });
    expect(resolveDate('月末の営業日', at('2026-12-01T10:00:00+09:00'), TZ, YEAR_END)).toEqual({
      ok: true,
      date: '2026-12-28',
    });
    // A plain date on a closing day stays as asked: the Guardian's notes say it is a day off.
    expect(resolveDate('12/30', mon, TZ, YEAR_END)).toEqual({ ok: true, date: '2026-12-30' });
  });

  it.each([['来週の平日'], ['来週の平日毎日'], ['400営業日後']])('%j is not one date', (expr) => {
    expect(resolveDate(expr, NOW, TZ)).toEqual({ ok: false });
  });

  it('fails closed on a calendar with no business day', () => {
    const closed: BusinessCalendar = { closingDays: [{ name: '休業', from: '01-01', to: '12-31' }] };
    expect(resolveDate('翌営業日', NOW, TZ, closed)).toEqual({ ok: false });
  });
});
