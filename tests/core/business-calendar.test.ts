import {
  addBusinessDays,
  calendarLine,
  closingDayName,
  firstBusinessDayOnOrAfter,
  holidayName,
  isBusinessDay,
  lastBusinessDayOnOrBefore,
  NATIONAL_CALENDAR,
  nextBusinessDay,
  nonBusinessReason,
  previousBusinessDay,
  type BusinessCalendar,
} from '../../src/core/business-calendar';
import { formatYMD, parseYMD, type YMD } from '../../src/core/zoned-time';

const TZ = 'Asia/Tokyo';
const d = (s: string): YMD => parseYMD(s)!;
const ORG: BusinessCalendar = {
  closingDays: [
    { name: '年末年始休業', from: '12-29', to: '01-03' },
    { name: '夏季休業', from: '2026-08-13', to: '2026-08-14' },
    { name: '創立記念日', from: '06-01' },
  ],
};

describe('national holidays (@holiday-jp/holiday_jp)', () => {
  it.each([
    ['2026-01-01', '元日'],
    ['2026-01-12', '成人の日'],
    ['2026-05-06', '振替休日'], // 憲法記念日 5/3 fell on a Sunday
    ['2026-09-22', '国民の休日'], // between 敬老の日 and 秋分の日
    ['2026-11-23', '勤労感謝の日'],
    ['2027-01-11', '成人の日'],
  ])('%s is %s and not a business day', (date, name) => {
    expect(holidayName(d(date))).toBe(name);
    expect(isBusinessDay(d(date), NATIONAL_CALENDAR)).toBe(false);
    expect(nonBusinessReason(d(date), NATIONAL_CALENDAR)).toBe(name);
  });

  it('ordinary weekdays are business days, weekends are not', () => {
    expect(holidayName(d('2026-11-24'))).toBeUndefined();
    expect(isBusinessDay(d('2026-11-24'), NATIONAL_CALENDAR)).toBe(true);
    expect(nonBusinessReason(d('2026-11-28'), NATIONAL_CALENDAR)).toBe('土曜日');
    expect(nonBusinessReason(d('2026-11-29'), NATIONAL_CALENDAR)).toBe('日曜日');
  });
});

describe('organisation closing days', () => {
  it('a yearly range wraps over the year end, a dated one holds once, a single day has no end', () => {
    expect(closingDayName(d('2026-12-28'), ORG)).toBeUndefined();
    for (const day of ['2026-12-29', '2026-12-31', '2027-01-01', '2027-01-03', '2030-12-30'])
      expect(closingDayName(d(day), ORG)).toBe('年末年始休業');
    expect(closingDayName(d('2027-01-04'), ORG)).toBeUndefined();
    expect(closingDayName(d('2026-08-14'), ORG)).toBe('夏季休業');
    expect(closingDayName(d('2027-08-13'), ORG)).toBeUndefined();
    expect(closingDayName(d('2027-06-01'), ORG)).toBe('創立記念日');
    // A closing day on a holiday is named after the organisation's closing.
    expect(nonBusinessReason(d('2027-01-01'), ORG)).toBe('年末年始休業');
    expect(nonBusinessReason(d('2027-01-01'), NATIONAL_CALENDAR)).toBe('元日');
  });

  it('the first business day of the new year is Monday 2027-01-04', () => {
    expect(formatYMD(firstBusinessDayOnOrAfter(d('2027-01-01'), ORG))).toBe('2027-01-04');
    expect(formatYMD(nextBusinessDay(d('2026-12-28'), ORG))).toBe('2027-01-04');
    expect(formatYMD(previousBusinessDay(d('2027-01-04'), ORG))).toBe('2026-12-28');
    // Without closing days 12/29–12/31 work and 1/1 is 元日.
    expect(formatYMD(nextBusinessDay(d('2026-12-28'), NATIONAL_CALENDAR))).toBe('2026-12-29');
    expect(formatYMD(firstBusinessDayOnOrAfter(d('2027-01-01'), NATIONAL_CALENDAR))).toBe('2027-01-04');
  });

  it('a calendar closed all year does not loop forever', () => {
    const closed: BusinessCalendar = { closingDays: [{ name: '休業', from: '01-01', to: '12-31' }] };
    expect(() => nextBusinessDay(d('2026-11-24'), closed)).toThrow(RangeError);
  });
});

describe('business day arithmetic', () => {
  it('3営業日後 on the Thursday before a Monday holiday skips the weekend and 勤労感謝の日', () => {
    expect(formatYMD(addBusinessDays(d('2026-11-19'), 3, NATIONAL_CALENDAR))).toBe('2026-11-25');
  });

  it('counts from a holiday and backwards, and 0 is the day itself', () => {
    expect(formatYMD(addBusinessDays(d('2026-11-23'), 1, NATIONAL_CALENDAR))).toBe('2026-11-24');
    expect(formatYMD(addBusinessDays(d('2026-11-25'), -3, NATIONAL_CALENDAR))).toBe('2026-11-19');
    expect(formatYMD(addBusinessDays(d('2026-11-23'), 0, NATIONAL_CALENDAR))).toBe('2026-11-23');
    expect(formatYMD(addBusinessDays(d('2026-05-01'), 1, NATIONAL_CALENDAR))).toBe('2026-05-07');
  });

  it('the last business day of a month', () => {
    expect(formatYMD(lastBusinessDayOnOrBefore(d('2026-11-30'), NATIONAL_CALENDAR))).toBe('2026-11-30');
    expect(formatYMD(lastBusinessDayOnOrBefore(d('2027-02-28'), NATIONAL_CALENDAR))).toBe('2027-02-26');
    expect(formatYMD(lastBusinessDayOnOrBefore(d('2026-12-31'), ORG))).toBe('2026-12-28');
    expect(formatYMD(lastBusinessDayOnOrBefore(d('2026-10-31'), NATIONAL_CALENDAR))).toBe('2026-10-30');
  });
});

describe('calendarLine (the context line)', () => {
  it('a Sunday before a holiday', () => {
    expect(calendarLine(new Date('2026-11-22T10:00:00+09:00'), TZ, ORG)).toBe(
      '今日 11/22（日）は休日（日曜日）。次の営業日: 11/24（火）。今後14日の祝日・休業日: 11/23（月）勤労感謝の日',
    );
  });

  it('23:30 JST on a Friday is still Friday; 00:30 is Saturday', () => {
    expect(calendarLine(new Date('2026-11-27T14:30:00Z'), TZ, NATIONAL_CALENDAR)).toBe(
      '今日 11/27（金）は営業日。次の営業日: 11/30（月）。今後14日の祝日・休業日: なし',
    );
    expect(calendarLine(new Date('2026-11-27T15:30:00Z'), TZ, NATIONAL_CALENDAR)).toMatch(
      /^今日 11\/28（土）は休日（土曜日）。次の営業日: 11\/30（月）/,
    );
  });

  it('the year end shows the closing as one span', () => {
    expect(calendarLine(new Date('2026-12-25T09:00:00+09:00'), TZ, ORG)).toBe(
      '今日 12/25（金）は営業日。次の営業日: 12/28（月）。今後14日の祝日・休業日: 12/29（火）〜1/3（日）年末年始休業',
    );
  });
});
