import { handledTopics, resolveReferences, type Directory } from '../../src/authorization';

/** Issue 40: who and which department a call names, read against the directory before the Guardian and the Gate. */
const directory: Directory = {
  departments: [
    { id: 'exec', parentId: null, name: '経営' },
    { id: 'sales', parentId: 'exec', name: '営業部', aliases: ['営業', 'Sales'] },
    { id: 'sales-tokyo', parentId: 'sales', name: '東京営業課' },
    { id: 'sales-osaka', parentId: 'sales', name: '大阪営業課' },
    { id: 'admin', parentId: 'exec', name: '管理部', handles: ['pay', 'evaluation'] },
    { id: 'payroll', parentId: 'admin', name: '給与課' },
    { id: 'board', parentId: 'exec', name: '取締役室', topSecret: true },
  ],
  members: [
    { id: 'suzuki', name: '鈴木健二', departmentId: 'sales', reading: 'すずき けんじ' },
    { id: 'tanaka', name: '田中太郎', departmentId: 'sales-tokyo', dictionaryReading: 'たなか たろう' },
    { id: 'sasaki-secret', name: '佐々木一郎', departmentId: 'board' },
  ],
};
const sender = { memberId: 'suzuki', level: 4, departmentId: 'sales' };
const schedule = { paramRoles: { department: 'target_department' as const } };
const task = { paramRoles: { assignee: 'assignee' as const } };

describe('resolveReferences', () => {
  it.each([
    ['営業部', 'sales'],
    ['営業', 'sales'],
    ['Sales', 'sales'],
    ['ｓａｌｅｓ', 'sales'],
    ['営業部の皆さん', 'sales'],
    ['sales-osaka', 'sales-osaka'],
    ['大阪営業課', 'sales-osaka'],
    ['大阪', 'sales-osaka'],
  ])('department %s → %s', (ref, id) => {
    const r = resolveReferences(schedule, { department: ref }, directory, sender);
    expect(r).toMatchObject({ parameters: { department: id }, unresolved: [], namesOthers: true });
  });

  it('a department that fits several is asked about with them; one that fits none with near names', () => {
    const several = resolveReferences(schedule, { department: '営業課' }, directory, sender);
    expect(several.unresolved).toEqual([
      {
        kind: 'department',
        param: 'department',
        ref: '営業課',
        near: ['東京営業課（id: sales-tokyo）', '大阪営業課（id: sales-osaka）'],
        ambiguous: true,
      },
    ]);
    const none = resolveReferences(schedule, { department: '営業二課' }, directory, sender);
    expect(none.unresolved[0]).toMatchObject({
      ref: '営業二課',
      near: ['東京営業課（id: sales-tokyo）', '大阪営業課（id: sales-osaka）', '営業部（id: sales）'],
    });
    expect(none.unresolved[0]!.ambiguous).toBeUndefined();
  });

  it('an unknown person is reported with near names the sender may see (never a top-secret member)', () => {
    // 佐々木一郎 is in a top-secret department: for a level-4 sender he does not exist (the same answer as nobody).
    const hidden = resolveReferences(task, { assignee: '佐々木' }, directory, sender);
    expect(hidden.unresolved).toEqual([{ kind: 'person', param: 'assignee', ref: '佐々木', near: [] }]);
    const ceo = resolveReferences(task, { assignee: '佐々木' }, directory, { ...sender, level: 6 });
    expect(ceo.unresolved).toEqual([]);
    const board = resolveReferences(schedule, { department: '取締役室' }, directory, sender);
    expect(board.unresolved).toEqual([{ kind: 'department', param: 'department', ref: '取締役室', near: [] }]);
    const typo = resolveReferences(task, { assignee: '鈴本さん' }, directory, { ...sender, memberId: 'tanaka' });
    expect(typo.unresolved).toEqual([
      { kind: 'person', param: 'assignee', ref: '鈴本さん', near: ['鈴木健二（id: suzuki、営業部）'] },
    ]);
    const secret = resolveReferences(task, { assignee: '佐々本一郎' }, directory, sender);
    expect(secret.unresolved[0]!.near).toEqual([]);
    const sound = resolveReferences(task, { assignee: 'Tanka' }, directory, sender);
    expect(sound.unresolved[0]!.near).toEqual(['田中太郎（id: tanaka、東京営業課）']);
  });

  it('says whether the call names anyone besides the sender', () => {
    expect(resolveReferences(task, {}, directory, sender).namesOthers).toBe(false);
    expect(resolveReferences(task, { assignee: '自分' }, directory, sender).namesOthers).toBe(false);
    expect(resolveReferences(task, { assignee: '鈴木健二' }, directory, sender).namesOthers).toBe(false);
    expect(resolveReferences(task, { assignee: 'suzuki' }, directory, sender).namesOthers).toBe(false);
    expect(resolveReferences(task, { assignee: 'Tanaka' }, directory, sender).namesOthers).toBe(true);
    expect(resolveReferences(task, { assignee: '誰か' }, directory, sender).namesOthers).toBe(true);
  });
});

describe('handledTopics', () => {
  it("is the sender's department's handles and those of the departments above it", () => {
    expect(handledTopics({ departmentId: 'payroll' }, directory).sort()).toEqual(['evaluation', 'pay']);
    expect(handledTopics({ departmentId: 'sales-tokyo' }, directory)).toEqual([]);
    expect(handledTopics({ departmentId: null }, directory)).toEqual([]);
  });
});
