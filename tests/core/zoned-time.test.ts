import { zonedParts } from '../../src/core/zoned-time';

/** zonedParts remembers its last answer per zone for the same UTC minute (a turn asks for "now" many times). */
describe('zonedParts', () => {
  it('gives each minute its own wall-clock parts, across a day boundary in Tokyo', () => {
    expect(zonedParts(new Date('2026-11-23T14:59:59Z'), 'Asia/Tokyo')).toEqual({
      y: 2026,
      m: 11,
      d: 23,
      hh: 23,
      mm: 59,
      weekday: 0,
    });
    expect(zonedParts(new Date('2026-11-23T15:00:00Z'), 'Asia/Tokyo')).toEqual({
      y: 2026,
      m: 11,
      d: 24,
      hh: 0,
      mm: 0,
      weekday: 1,
    });
    // Back to the earlier minute: not the remembered one.
    expect(zonedParts(new Date('2026-11-23T14:59:01Z'), 'Asia/Tokyo').d).toBe(23);
  });

  it('keeps zones apart within one minute', () => {
    const at = new Date('2026-11-23T15:00:30Z');
    expect(zonedParts(at, 'Asia/Tokyo').hh).toBe(0);
    expect(zonedParts(at, 'Europe/Berlin').hh).toBe(16);
    expect(zonedParts(at, 'Asia/Tokyo').hh).toBe(0);
  });

  it('hands out a copy: changing an answer does not change the next one', () => {
    const at = new Date('2026-11-23T03:00:00Z');
    const first = zonedParts(at, 'Asia/Tokyo');
    first.d = 1;
    expect(zonedParts(at, 'Asia/Tokyo').d).toBe(23);
  });

  it('refuses an unknown zone every time', () => {
    const at = new Date('2026-11-23T03:00:00Z');
    expect(() => zonedParts(at, 'Mars/Olympus')).toThrow(RangeError);
    expect(() => zonedParts(at, 'Mars/Olympus')).toThrow(RangeError);
  });
});
