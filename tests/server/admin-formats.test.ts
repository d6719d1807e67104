import { readDay } from '../../src/server/admin/day-input';
import { formatCost } from '../../src/server/admin/format';

describe('what /admin reads and writes', () => {
  it('reads a day as Japanese operators type it, year first, and refuses what is not a real day', () => {
    const day = { y: 2026, m: 11, d: 28 };
    for (const text of [
      '2026/11/28',
      '2026-11-28',
      '2026.11.28',
      '2026年11月28日',
      '２０２６／１１／２８',
      ' 2026/11/28（土）',
    ])
      expect([text, readDay(text)]).toEqual([text, day]);
    expect(readDay('2026/2/3')).toEqual({ y: 2026, m: 2, d: 3 });
    for (const text of ['11/28/2026', '28/11/2026', '2026/02/30', '2026/13/01', '11月28日', 'あした', ''])
      expect([text, readDay(text)]).toEqual([text, null]);
  });

  it('writes every cost one way: dollars, grouped thousands, four decimals', () => {
    expect(formatCost(0)).toBe('$0.0000');
    expect(formatCost(0.00648)).toBe('$0.0065');
    expect(formatCost('0.03')).toBe('$0.0300');
    expect(formatCost(1234.5)).toBe('$1,234.5000');
    expect(formatCost(0.00001)).toBe('$0.0001未満');
    expect(formatCost(null)).toBe('$0.0000');
  });
});
