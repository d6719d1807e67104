import {
  chatworkAnswerText,
  neutralizeForChatwork,
  parseMentions,
  parseReplyTo,
  stripChatworkMarkup,
} from '../../../src/adapters/chatwork/markup';

describe('stripChatworkMarkup', () => {
  it('removes mention, reply and to-all tags but keeps the text', () => {
    expect(stripChatworkMarkup('[To:1484814]What do you like to eat？')).toBe('What do you like to eat？');
    expect(stripChatworkMarkup('[rp aid=12 to=34-56]山田さん\n了解です')).toBe('山田さん\n了解です');
    expect(stripChatworkMarkup('[toall][TOALL] 全員へ')).toBe('全員へ');
  });

  it('unwraps code, quotes, info boxes, links and downloads', () => {
    const body =
      '[To:1] 田中さん\n[qt][qtmeta aid=5 time=1498028125]前の話[/qt]\n[code]x = 1[/code][hr]' +
      '[info][title]件名[/title]本文[/info][url]https://example.com/a[/url]\n[download:1466244790]file.pdf (54 KB)';
    expect(stripChatworkMarkup(body)).toBe(
      '田中さん\n前の話\nx = 1\n件名\n本文https://example.com/a\nfile.pdf (54 KB)',
    );
  });

  it('removes profile, preview and system-text tags', () => {
    expect(
      stripChatworkMarkup('[dtext:chatroom_member_is][piconname:123][dtext:chatroom_added][preview id=1 ht=2]x'),
    ).toBe('x');
  });

  it('removes leftovers of unbalanced blocks', () => {
    expect(stripChatworkMarkup('[qt]quoted without meta[/qt] [info]open')).toBe('quoted without meta open');
  });
});

describe('parseMentions', () => {
  it('reads [To:n] and [rp aid=n] ids in order, without duplicates', () => {
    expect(parseMentions('[To:1] a [rp aid=2 to=9-8] b [To:1][to:3]')).toEqual(['1', '2', '3']);
  });

  it('ignores tags inside code and (nested) quote blocks', () => {
    const body = '[code][To:7][/code][qt][qtmeta aid=5][qt][To:8][/qt][To:9][/qt][To:10]';
    expect(parseMentions(body)).toEqual(['10']);
  });

  it('does not treat [toall] as a mention', () => {
    expect(parseMentions('[toall] hello')).toEqual([]);
  });
});

describe('parseReplyTo', () => {
  it('returns the reply target', () => {
    expect(parseReplyTo('[rp aid=12 to=34-1556]Bob\nok')).toEqual({ accountId: '12', roomId: '34', messageId: '1556' });
  });

  it('returns undefined without a tag or when it is only quoted', () => {
    expect(parseReplyTo('hello')).toBeUndefined();
    expect(parseReplyTo('[qt][qtmeta aid=1][rp aid=12 to=34-56][/qt]')).toBeUndefined();
  });
});

describe('neutralizeForChatwork', () => {
  const dangerous = [
    '[toall]',
    '[TOALL]',
    '[To:123]',
    '[rp aid=1 to=2-3]',
    '[info]x[/info]',
    '[title]t[/title]',
    '[qt]q[/qt]',
    '[qtmeta aid=1]',
    '[code]c[/code]',
    '[hr]',
    '[picon:1]',
    '[pname:1]',
    '[piconname:1]',
    '[dtext:x]',
    '[download:1]',
    '[preview id=1 ht=2]',
    '[url]https://x[/url]',
    '[task aid=1]',
    '[ toall]',
    '[\u200Btoall]',
  ];

  it.each(dangerous)('leaves no tag in %j', (text) => {
    const out = neutralizeForChatwork(`before ${text} after`);
    expect(out).not.toMatch(/\[\s*\/?\s*[A-Za-z]/);
    expect(out).toMatch(/［/);
    // The mention of everyone cannot be reconstructed by stripping, either.
    expect(stripChatworkMarkup(out)).toBe(out.trim());
  });

  it('keeps ordinary brackets, length and the rest of the text', () => {
    expect(neutralizeForChatwork('参考 [1] と [2]、a[b')).toBe('参考 [1] と [2]、a［b');
    const text = '田中さん [To:99] へ';
    expect(neutralizeForChatwork(text)).toHaveLength(text.length);
  });
});

describe('chatworkAnswerText (what the person wrote after the TO / 返信 buttons)', () => {
  const names = ['Hisho', 'ソウルくん'];
  it.each([
    ['[To:9999]Hishoさん\nはい', 'はい'],
    ['[rp aid=9999 to=5001-123]Hishoさん\nはい', 'はい'],
    ['[To:9999]Hisho さん はい', 'はい'],
    ['[To:9999]Hisho様\u3000はい', 'はい'],
    ['[To:9999]hishoさん\nＯＫ', 'ＯＫ'],
    ['[To:9999]Hishoさん[To:1001]田中太郎さん\nはい', 'はい'],
    ['[To:9999]Hishoさん\n[To:1001]Taro Tanakaさん\nはい、でも期限は金曜にして', 'はい、でも期限は金曜にして'],
    ['[To:1001]田中さん はい', 'はい'],
    ['[To:9999]ソウルくん\nうん', 'うん'],
    ['[To:9999]はい', 'はい'],
    ['[To:9999]\nはい', 'はい'],
    ['[To:9999]Hishoさん\n[qt][qtmeta aid=9999 time=1]実行してよいウル？[/qt]\nはい', 'はい'],
  ])('%j → %j', (body, expected) => expect(chatworkAnswerText(body, names)).toBe(expected));

  it('keeps what the person wrote when it is not a name: punctuation, sentences, text before the tag', () => {
    expect(chatworkAnswerText('[To:9999] はい、田中さんにお願い', names)).toBe('はい、田中さんにお願い');
    expect(chatworkAnswerText('[To:9999]Hishoさん\n今日の予定は？', names)).toBe('今日の予定は？');
    expect(chatworkAnswerText('いいえ [To:9999]Hishoさん', names)).toBe('いいえ');
  });

  it('never turns something else into a plain yes: a denial or a change stays what it is', () => {
    expect(chatworkAnswerText('[To:9999]Hishoさん\nいいえ', names)).toBe('いいえ');
    expect(chatworkAnswerText('[rp aid=9999 to=1-2]Hishoさん\nはい、でも明日', names)).toBe('はい、でも明日');
  });

  it('without known names still drops a name ending in an honorific', () => {
    expect(chatworkAnswerText('[To:9999]Botさん\nはい')).toBe('はい');
    expect(chatworkAnswerText('[To:9999]秘書くん はい')).toBe('はい');
  });
});
