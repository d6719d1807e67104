import { cronMatcher, planDue, type CronMatcher } from '../../src/scheduler/notices/periods';
import { parseQuietHours, quietUntil } from '../../src/scheduler/notices/quiet-hours';

const JST = 'Asia/Tokyo';
const at = (iso: string) => new Date(iso);
const HOUR = 3_600_000;

describe('schedule periods (R-P2)', () => {
  const matchers: CronMatcher[] = [];
  const m = (expr: string, tz = JST) => {
    const x = cronMatcher(expr, tz);
    matchers.push(x);
    return x;
  };
  afterAll(() => matchers.forEach((x) => x.dispose()));
  const base = {
    horizonMs: 3 * HOUR,
    lookbackMs: 7 * 24 * HOUR,
    createdAt: at('2026-11-01T00:00:00Z'),
    lastPeriod: null,
  };

  it('fires the period that has just begun, in the schedule time zone', () => {
    const digest = m('30 8 * * 1-5');
    // Monday 2026-11-23 08:30:02 JST.
    expect(
      planDue({ ...base, matcher: digest, now: at('2026-11-22T23:30:02Z'), lastPeriod: at('2026-11-20T23:30:00Z') }),
    ).toEqual({ action: 'fire', period: at('2026-11-22T23:30:00Z'), status: 'fired', skipped: 0 });
    // Same schedule read in UTC: 08:30 UTC is a different instant.
    expect(
      planDue({
        ...base,
        matcher: m('30 8 * * 1-5', 'UTC'),
        now: at('2026-11-23T08:30:01Z'),
        lastPeriod: at('2026-11-20T08:30:00Z'),
      }),
    ).toMatchObject({ action: 'fire', period: at('2026-11-23T08:30:00Z') });
  });

  it('does nothing when the newest period is recorded (another instance, a second tick)', () => {
    const every = m('* * * * *');
    expect(
      planDue({ ...base, matcher: every, now: at('2026-11-23T00:00:40Z'), lastPeriod: at('2026-11-23T00:00:00Z') }),
    ).toEqual({ action: 'none' });
  });

  it('after downtime across two periods: catches up the newest once and counts the other as skipped', () => {
    const every = m('* * * * *');
    const plan = planDue({
      ...base,
      matcher: every,
      now: at('2026-11-23T00:03:20Z'),
      lastPeriod: at('2026-11-23T00:00:00Z'),
    });
    // 00:01, 00:02 and 00:03 were missed; 00:03 is the current minute, so it fires on time.
    expect(plan).toEqual({ action: 'fire', period: at('2026-11-23T00:03:00Z'), status: 'fired', skipped: 2 });
    const hourly = m('0 * * * *');
    expect(
      planDue({ ...base, matcher: hourly, now: at('2026-11-23T02:20:00Z'), lastPeriod: at('2026-11-22T23:00:00Z') }),
    ).toEqual({ action: 'fire', period: at('2026-11-23T02:00:00Z'), status: 'caught_up', skipped: 2 });
  });

  it('skips and counts periods older than the horizon instead of sending stale notices', () => {
    const digest = m('30 8 * * *');
    // 20:00 JST: the 08:30 digest is 11.5 hours old.
    expect(
      planDue({ ...base, matcher: digest, now: at('2026-11-23T11:00:00Z'), lastPeriod: at('2026-11-21T23:30:00Z') }),
    ).toEqual({ action: 'skip', period: at('2026-11-22T23:30:00Z'), skipped: 1 });
  });

  it('never fires for periods before the schedule existed', () => {
    const digest = m('30 8 * * *');
    expect(
      planDue({ ...base, matcher: digest, now: at('2026-11-23T01:00:00Z'), createdAt: at('2026-11-23T00:00:00Z') }),
    ).toEqual({ action: 'none' });
  });
});

describe('quiet hours (R-P3)', () => {
  const night = parseQuietHours('21:00-08:00');
  const lunch = parseQuietHours('12:00-13:00');

  it('parses HH:MM-HH:MM and refuses anything else', () => {
    expect(night).toMatchObject({ startMin: 21 * 60, endMin: 8 * 60, end: '08:00' });
    expect(parseQuietHours('9pm-8am')).toBeNull();
    expect(parseQuietHours('08:00-08:00')).toBeNull();
    expect(parseQuietHours(null)).toBeNull();
  });

  it('a notice due in quiet hours waits until they end (wrapping past midnight)', () => {
    // 22:30 JST → 08:00 JST next day.
    expect(quietUntil(at('2026-11-23T13:30:00Z'), night, JST)).toEqual(at('2026-11-23T23:00:00Z'));
    // 06:10 JST → 08:00 JST the same day.
    expect(quietUntil(at('2026-11-22T21:10:00Z'), night, JST)).toEqual(at('2026-11-22T23:00:00Z'));
    // 08:00 JST exactly: quiet hours are over.
    expect(quietUntil(at('2026-11-22T23:00:00Z'), night, JST)).toBeNull();
    expect(quietUntil(at('2026-11-23T03:30:00Z'), lunch, JST)).toEqual(at('2026-11-23T04:00:00Z'));
    expect(quietUntil(at('2026-11-23T05:00:00Z'), lunch, JST)).toBeNull();
  });
});
