import { descendants, isDepartmentVisible, visibleDepartments } from '../../src/authorization';
import { directory } from './fixtures';

const sorted = (v: Set<string> | 'ALL') => (v === 'ALL' ? v : [...v].sort());

describe('visibleDepartments', () => {
  it.each([
    [0, []],
    [1, ['sales']],
    [2, ['sales']],
    [3, ['sales', 'sales-east']],
    [4, ['sales', 'sales-east', 'sales-east-tokyo']],
    [5, 'ALL'],
    [6, 'ALL'],
  ] as const)('level %i sees %j', (level, expected) => {
    expect(sorted(visibleDepartments({ level, departmentId: 'sales' }, directory.departments))).toEqual(expected);
  });

  it.each([7, -1, 2.5, Number.NaN])('an invalid level %p sees nothing', (level) => {
    expect(sorted(visibleDepartments({ level, departmentId: 'sales' }, directory.departments))).toEqual([]);
  });

  it('a member without a department sees nothing below level 5', () => {
    expect(sorted(visibleDepartments({ level: 4, departmentId: null }, directory.departments))).toEqual([]);
    expect(visibleDepartments({ level: 5, departmentId: null }, directory.departments)).toBe('ALL');
  });

  it('terminates on cycles and self-parents', () => {
    const cyclic = [
      { id: 'a', parentId: 'c' },
      { id: 'b', parentId: 'a' },
      { id: 'c', parentId: 'b' },
      { id: 'd', parentId: 'd' },
    ];
    expect(sorted(visibleDepartments({ level: 4, departmentId: 'a' }, cyclic))).toEqual(['a', 'b', 'c']);
    expect(sorted(visibleDepartments({ level: 4, departmentId: 'd' }, cyclic))).toEqual(['d']);
    expect(sorted(descendants('a', cyclic, 1))).toEqual(['a', 'b']);
  });

  it('isDepartmentVisible handles ALL and null', () => {
    expect(isDepartmentVisible('ALL', null)).toBe(true);
    expect(isDepartmentVisible(new Set(['x']), null)).toBe(false);
    expect(isDepartmentVisible(new Set(['x']), 'x')).toBe(true);
  });
});
