import { stripLeadingName } from '../../src/core/addressee';

describe('stripLeadingName', () => {
  const names = ['Hisho', 'ソウルくん', '秘書'];
  it.each([
    ['Hisho、はい', 'はい'],
    ['@Hisho はい', 'はい'],
    ['hishoさん はい', 'はい'],
    ['ソウルくん　はい', 'はい'],
    ['秘書さん、いいえ', 'いいえ'],
    ['Hisho: yes', 'yes'],
  ])('%j → %j', (text, expected) => expect(stripLeadingName(text, names)).toBe(expected));

  it('leaves the rest alone: names later in the text, other names, no names', () => {
    expect(stripLeadingName('はい Hisho', names)).toBe('はい Hisho');
    expect(stripLeadingName('田中さん、はい', names)).toBe('田中さん、はい');
    expect(stripLeadingName('Hishoはい', names)).toBe('Hishoはい');
    expect(stripLeadingName(' はい ', [])).toBe('はい');
  });
});
