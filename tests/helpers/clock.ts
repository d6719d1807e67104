import { addDays, formatZonedDateTime, zonedParts } from '../../src/core/zoned-time';

/** A settable clock for the service's `now` override. */
export class TestClock {
  constructor(public current: Date) {}
  now = (): Date => this.current;
  set(d: Date): void {
    this.current = d;
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

/**
 * A future instant at `time` ("HH:MM:SS") Tokyo time on weekday `weekday` (0 = Monday), at least a week
 * after the real clock — so work items the scheduler holds for quiet hours really wait (the queue uses
 * the database's clock).
 */
export function futureTokyo(weekday: number, time: string, weeksAhead = 1): Date {
  const p = zonedParts(new Date(Date.now() + weeksAhead * 7 * 86_400_000), 'Asia/Tokyo');
  const day = addDays({ y: p.y, m: p.m, d: p.d }, (weekday - p.weekday + 7) % 7);
  const [hh, mm, ss = '00'] = time.split(':');
  const at = new Date(formatZonedDateTime(day, `${hh}:${mm}`, 'Asia/Tokyo'));
  return new Date(at.getTime() + Number(ss) * 1000);
}

/** The instant of `time` ("HH:MM") Tokyo time, `days` days after the Tokyo date of `base`. */
export function tokyoAt(base: Date, days: number, time: string): Date {
  const p = zonedParts(base, 'Asia/Tokyo');
  return new Date(formatZonedDateTime(addDays({ y: p.y, m: p.m, d: p.d }, days), time, 'Asia/Tokyo'));
}
