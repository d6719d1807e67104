import { checkTargets } from '../../src/authorization/targets';
import { matchMembers, nameSound, textSounds } from '../../src/authorization/names';
import type { Directory, DirectoryMember } from '../../src/authorization/directory';

const member = (id: string, name: string, more: Partial<DirectoryMember> = {}): DirectoryMember => ({
  id,
  name,
  departmentId: 'sales',
  ...more,
});
const members: DirectoryMember[] = [
  member('tanaka-taro', '田中太郎', { reading: 'たなか たろう', romaji: 'Tanaka Taro' }),
  member('tanaka-hanako', '田中花子', { reading: 'たなか はなこ' }),
  member('saito-ken', '斉藤健', { reading: 'さいとう けん' }),
  member('takahashi', '髙橋一郎', { reading: 'たかはし いちろう' }),
  member('yamazaki', '山﨑次郎'),
  member('watanabe', '渡邊三郎', { romaji: 'Watanabe Saburo' }),
  member('sato', '佐藤美咲', { reading: 'さとう みさき', aliases: ['みさき'] }),
  member('smith', 'John Smith'),
  member('honma', '本間亮', { reading: 'ほんま りょう' }),
];
const ids = (ref: string) => matchMembers(ref, members).map((m) => m.id);

describe('the shared name matcher (issue 33)', () => {
  it.each([
    ['齋藤さん', ['saito-ken']],
    ['斎藤', ['saito-ken']],
    ['齊藤健', ['saito-ken']],
    ['高橋', ['takahashi']],
    ['山崎さん', ['yamazaki']],
    ['渡辺', ['watanabe']],
    ['渡邉三郎', ['watanabe']],
  ])('kanji variants: %s → %j', (ref, expected) => expect(ids(ref)).toEqual(expected));

  it.each([
    ['ｔａｎａｋａ－ｔａｒｏ', ['tanaka-taro']],
    ['田中　太郎', ['tanaka-taro']],
    ['ＴＡＮＡＫＡ　ＴＡＲＯ', ['tanaka-taro']],
    ['ｻﾄｳ', ['sato']],
  ])('full and half width: %s → %j', (ref, expected) => expect(ids(ref)).toEqual(expected));

  it.each([
    ['たなか たろう', ['tanaka-taro']],
    ['タナカタロウ', ['tanaka-taro']],
    ['tanaka taro', ['tanaka-taro']],
    ['Tanaka Tarou', ['tanaka-taro']],
    ['Tanaka Tarō', ['tanaka-taro']],
    ['さいとうさん', ['saito-ken']],
    ['Saitoh', ['saito-ken']],
    ['Saito-san', ['saito-ken']],
    ['Satō', ['sato']],
    ['サトー', ['sato']],
    ['Homma', ['honma']],
    ['Smith', ['smith']],
    ['スミス', []],
  ])('kana and romaji: %s → %j', (ref, expected) => expect(ids(ref)).toEqual(expected));

  it.each([
    ['Taro Tanaka', ['tanaka-taro']],
    ['Mr. Taro Tanaka', ['tanaka-taro']],
    ['Saburo Watanabe', ['watanabe']],
    ['Smith John', ['smith']],
    ['みさき さとう', ['sato']],
  ])('family and given name in either order: %s → %j', (ref, expected) => expect(ids(ref)).toEqual(expected));

  it('an English speaker\'s "Tanaka" finds the same two members as 「田中さん」, so both get the candidates question', () => {
    expect(ids('田中さん')).toEqual(['tanaka-taro', 'tanaka-hanako']);
    expect(ids('Tanaka')).toEqual(['tanaka-taro', 'tanaka-hanako']);
    expect(ids('Tanaka-san')).toEqual(['tanaka-taro', 'tanaka-hanako']);
    expect(ids('たなかさん')).toEqual(['tanaka-taro', 'tanaka-hanako']);
    expect(ids('Hanako')).toEqual(['tanaka-hanako']);
  });

  it('short or unrelated sounds find nobody (no guessing)', () => {
    expect(ids('ta')).toEqual([]);
    expect(ids('Suzuki')).toEqual([]);
    expect(ids('Tanakaya')).toEqual([]);
    expect(ids('   ')).toEqual([]);
  });

  it('names are read as sounds only when written in kana or Latin letters', () => {
    expect(nameSound('田中')).toBeNull();
    expect(nameSound('Mr. Tanaka-san')).toEqual(['tanaka']);
    expect(nameSound('おおはし けんいち')).toEqual(['ohashi', 'kenichi']);
    expect([...textSounds('Please ask Taro Tanaka')]).toContain('tarotanaka');
  });

  it('the gate judges the same members: "Tanaka" as assignee is in scope (the handler then asks which one)', () => {
    const directory: Directory = {
      departments: [{ id: 'sales', parentId: null, topSecret: false, name: '営業' }] as Directory['departments'],
      members,
    };
    const actor = { memberId: 'sato', level: 2, departmentId: 'sales' } as Parameters<typeof checkTargets>[0];
    const tool = { paramRoles: { assignee: 'assignee' as const } };
    expect(checkTargets(actor, tool, { assignee: 'Tanaka' }, directory)).toBeNull();
    expect(checkTargets(actor, tool, { assignee: 'Suzuki' }, directory)).toMatchObject({
      reasonCode: 'Z_UNKNOWN_TARGET',
    });
  });
});
