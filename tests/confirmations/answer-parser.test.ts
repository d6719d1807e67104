import { classifyAnswer, isUrgent, normalizeAnswer } from '../../src/confirmations/answer-parser';

const APPROVE = [
  'はい',
  'はーい',
  'うん',
  'ok',
  'okay',
  'OK',
  'オッケー',
  'いいよ',
  'いいです',
  'お願い',
  'お願いします',
  'おねがい',
  '実行',
  '実行して',
  '進めて',
  'yes',
  'y',
  'sure',
  '1',
  '１',
  '👍',
  '承認',
];
const DENY = [
  'いいえ',
  'いや',
  'no',
  'n',
  'やめ',
  'やめて',
  'やめる',
  'キャンセル',
  'cancel',
  'だめ',
  'ダメ',
  '中止',
  '2',
  '２',
  '👎',
  '不要',
];

describe('classifyAnswer: exact approvals', () => {
  it.each(APPROVE)('%s → approve', (w) => expect(classifyAnswer(w)).toBe('approve'));
  it.each([
    'はい。',
    'はい！',
    'ＯＫ',
    'Ok!',
    'YES.',
    ' yes ',
    'いいよ〜',
    'いいよ~',
    'はい!!',
    '👍🏻',
    '👍️',
    'はい、お願いします',
    'はい お願いします',
    'ok 👍',
  ])('%s → approve (normalised)', (w) => expect(classifyAnswer(w)).toBe('approve'));
});

describe('classifyAnswer: exact denials', () => {
  it.each(DENY)('%s → deny', (w) => expect(classifyAnswer(w)).toBe('deny'));
  it.each(['いいえ。', 'NO!', 'キャンセル！', '👎🏽', 'いいえ、やめて', 'No, cancel'])('%s → deny (normalised)', (w) =>
    expect(classifyAnswer(w)).toBe('deny'),
  );
});

describe('classifyAnswer: modification requests', () => {
  it.each([
    'はい、でも明日にして',
    'いいよ、ただし金曜に',
    'yes but make it Friday',
    'Yes, but on Friday',
    'はい、明日にして',
    'はい、期限は金曜に変更して',
    'ok, make it 3pm',
    'yes, instead assign it to Sato',
    '明日じゃなくて金曜にして',
    '金曜に変えて',
    '期限を金曜に変更',
    'いいえ、鈴木さんにして',
    'でも田中さんじゃなくて佐藤さん',
  ])('%s → modify', (w) => expect(classifyAnswer(w)).toBe('modify'));
});

describe('classifyAnswer: unclear is never approval', () => {
  it.each([
    'はいはい、あとで',
    'うーん',
    'たぶん',
    '1件目',
    '12',
    'ちょっと待って',
    'はい?',
    'yes?',
    'はいはい',
    'yesss',
    'okですかね',
    'いいですか',
    '今日の予定教えて',
    '',
    '   ',
    '🤔',
    'はい、ありがとう',
    '何でもいいよ',
    'not now',
    'お願いできる？',
    '1 2',
    'はい いいえ',
    'y e s',
    '実行しないで',
    'no problem?',
  ])('%j → other', (w) => expect(classifyAnswer(w)).toBe('other'));

  it('never approves unclear texts (even where it reads them as modifications)', () => {
    for (const w of ['はいはい、あとで', 'うーん', 'たぶん', '1件目', 'はい、でも明日にして', 'いつでもいいよ']) {
      expect(classifyAnswer(w)).not.toBe('approve');
    }
  });
});

describe('normalizeAnswer', () => {
  it('applies NFKC, lower-cases, trims and strips trailing punctuation and emoji modifiers', () => {
    expect(normalizeAnswer('  ＯＫ！ ')).toBe('ok');
    expect(normalizeAnswer('はい。。')).toBe('はい');
    expect(normalizeAnswer('👍🏿')).toBe('👍');
    expect(normalizeAnswer('はい?')).toBe('はい?');
  });
});

describe('isUrgent', () => {
  it.each([
    '緊急で対応して',
    '今すぐ止めて',
    'ストップ',
    'それ止めて',
    'とめて！',
    'ヘルプ',
    '助けて',
    'STOP',
    'help me',
    'urgent: server down',
    'Ｓｔｏｐ',
  ])('%s → urgent', (w) => expect(isUrgent(w)).toBe(true));
  it.each(['はい', '今日の予定教えて', 'いいえ', 'helpful tips', 'stopwatch', 'やめて'])('%s → not urgent', (w) =>
    expect(isUrgent(w)).toBe(false),
  );
});
