/**
 * Labelled redaction samples (issue 8, R-O2): Japanese and English text as people type it — full-width
 * digits and `＠`, `ー`/`－` as hyphens, parentheses — with the exact spans that must be redacted and their
 * labels. Samples without spans are negatives: dates, times, amounts, task ids and ordinary words that must
 * come out unchanged.
 */

export type Label =
  | 'PHONE'
  | 'EMAIL'
  | 'MY_NUMBER'
  | 'CARD'
  | 'BANK_ACCOUNT'
  | 'PASSPORT'
  | 'POSTAL'
  | 'ADDRESS'
  | 'SECRET'
  | 'API_KEY'
  | 'URL_CREDENTIALS';

export interface TextSample {
  text: string;
  /** Substrings of `text` (in order of appearance) and the label each must become. */
  spans: [string, Label][];
}

export const TEXT_SAMPLES: readonly TextSample[] = [
  // Phone numbers
  { text: '携帯は ０９０－１２３４－５６７８ です', spans: [['０９０－１２３４－５６７８', 'PHONE']] },
  { text: '090ー1234ー5678に電話して', spans: [['090ー1234ー5678', 'PHONE']] },
  { text: '090−1234−5678（マイナス記号）', spans: [['090−1234−5678', 'PHONE']] },
  { text: '代表 03―1234―5678 まで', spans: [['03―1234―5678', 'PHONE']] },
  { text: '電話: 03-1234-5678', spans: [['03-1234-5678', 'PHONE']] },
  { text: '(03)1234-5678 までお願いします', spans: [['(03)1234-5678', 'PHONE']] },
  { text: '本社は０３（１２３４）５６７８です', spans: [['０３（１２３４）５６７８', 'PHONE']] },
  { text: 'call me at +81 90-1234-5678 tomorrow', spans: [['+81 90-1234-5678', 'PHONE']] },
  { text: 'my phone is 080 1234 5678', spans: [['080 1234 5678', 'PHONE']] },
  { text: '電話は0312345678です', spans: [['0312345678', 'PHONE']] },
  { text: '緊急連絡先 ０１２０－１２３－４５６', spans: [['０１２０－１２３－４５６', 'PHONE']] },
  // Bank accounts and passports (labelled)
  { text: '振込先は三菱UFJ銀行 渋谷支店 普通 1234567 です', spans: [['1234567', 'BANK_ACCOUNT']] },
  { text: '口座番号：７６５４３２１', spans: [['７６５４３２１', 'BANK_ACCOUNT']] },
  { text: 'my account number is 2345678', spans: [['2345678', 'BANK_ACCOUNT']] },
  { text: 'パスポート番号は TK1234567 です', spans: [['TK1234567', 'PASSPORT']] },
  { text: 'passport no. ab7654321', spans: [['ab7654321', 'PASSPORT']] },
  { text: '口座開設の手続きは経理へ、パスポートは出張に必要', spans: [] },
  // E-mail
  { text: 'メール: ｔａｒｏ＠ｅｘａｍｐｌｅ．ｃｏ．ｊｐ', spans: [['ｔａｒｏ＠ｅｘａｍｐｌｅ．ｃｏ．ｊｐ', 'EMAIL']] },
  { text: 'mail hanako.sato+work@example.com please', spans: [['hanako.sato+work@example.com', 'EMAIL']] },
  { text: '宛先 yamada＠acme.co.jp に送って', spans: [['yamada＠acme.co.jp', 'EMAIL']] },
  {
    text: '田中さん(tanaka@example.jp, 090-0000-1111)に連絡',
    spans: [
      ['tanaka@example.jp', 'EMAIL'],
      ['090-0000-1111', 'PHONE'],
    ],
  },
  // My Number
  { text: 'マイナンバーは１２３４５６７８９０１２です', spans: [['１２３４５６７８９０１２', 'MY_NUMBER']] },
  { text: 'My Number: 1234 5678 9012', spans: [['1234 5678 9012', 'MY_NUMBER']] },
  { text: '個人番号 ９８７６－５４３２－１０９３ を提出', spans: [['９８７６－５４３２－１０９３', 'MY_NUMBER']] },
  { text: '番号 123456789018 を登録して', spans: [['123456789018', 'MY_NUMBER']] },
  // Card numbers
  { text: 'カード番号 4111-1111-1111-1111', spans: [['4111-1111-1111-1111', 'CARD']] },
  { text: 'card 5555 5555 5555 4444 exp 12/28', spans: [['5555 5555 5555 4444', 'CARD']] },
  { text: '４１１１１１１１１１１１１１１１で払います', spans: [['４１１１１１１１１１１１１１１１', 'CARD']] },
  { text: 'Amex 378282246310005 on file', spans: [['378282246310005', 'CARD']] },
  { text: 'JCB ３５３０ー１１１３ー３３３０ー００００', spans: [['３５３０ー１１１３ー３３３０ー００００', 'CARD']] },
  // Postal codes and addresses
  {
    text: '〒１５０－０００２ 東京都渋谷区渋谷２－２１－１',
    spans: [
      ['〒１５０－０００２', 'POSTAL'],
      ['東京都渋谷区渋谷２－２１－１', 'ADDRESS'],
    ],
  },
  { text: '住所は大阪市北区梅田1-1-1です', spans: [['大阪市北区梅田1-1-1', 'ADDRESS']] },
  { text: '千代田区丸の内1丁目2番3号に移転します', spans: [['千代田区丸の内1丁目2番3号', 'ADDRESS']] },
  { text: '郵便番号は123-4567', spans: [['123-4567', 'POSTAL']] },
  { text: 'Send it to 150-0002, Tokyo', spans: [['150-0002', 'POSTAL']] },
  {
    text: '〒530-0001 大阪府大阪市北区梅田３丁目１番１号',
    spans: [
      ['〒530-0001', 'POSTAL'],
      ['大阪府大阪市北区梅田３丁目１番１号', 'ADDRESS'],
    ],
  },
  // Secrets
  { text: 'password: hunter2', spans: [['hunter2', 'SECRET']] },
  { text: 'パスワードは Abc123! です', spans: [['Abc123!', 'SECRET']] },
  { text: 'パスワード：ｓｅｃｒｅｔ９９', spans: [['ｓｅｃｒｅｔ９９', 'SECRET']] },
  { text: 'the password is tr0ub4dor', spans: [['tr0ub4dor', 'SECRET']] },
  {
    text: 'APIキーは sk-ant-api03-abcdefghijklmnopqrstuv',
    spans: [['sk-ant-api03-abcdefghijklmnopqrstuv', 'API_KEY']],
  },
  {
    text: 'Authorization: Bearer abcdefghijklmnop0123456789',
    spans: [['Bearer abcdefghijklmnop0123456789', 'API_KEY']],
  },
  { text: 'token=ghp_abcdefghijklmnopqrstuvwxyz0123', spans: [['ghp_abcdefghijklmnopqrstuvwxyz0123', 'API_KEY']] },
  {
    text: 'DB は postgresql://app:s3cr3t@db.internal:5432/hisho',
    spans: [['postgresql://app:s3cr3t@db.internal:5432/hisho', 'URL_CREDENTIALS']],
  },
  // Negatives: nothing to redact
  {
    text: 'webhook token 3f9a1c7e5b2d8f4a6c0e9b1d7a3f5c8e2b4d6f8a',
    spans: [['3f9a1c7e5b2d8f4a6c0e9b1d7a3f5c8e2b4d6f8a', 'SECRET']],
  },
  { text: '明日 2026-11-24 の 15:00 から会議', spans: [] },
  { text: 'migration 20261122190700_confirmation_rounds_and_outbox_owner applied', spans: [] },
  { text: '予算は ¥120,000 です', spans: [] },
  { text: '請求額は１２０，０００円、税込み１３２，０００円', spans: [] },
  { text: 'タスク 3f2b8c1e-9a4d-4c7b-8e21-0d5f6a7b8c9d を完了にして', spans: [] },
  { text: 'タスク 01234567-0123-4567-8901-234567890123 も', spans: [] },
  { text: '期限は 2026-11-24T15:00:00+09:00 です', spans: [] },
  { text: 'Meeting at 10:30, room 301, budget 2,500,000 yen', spans: [] },
  { text: '注文番号 1234567812345678 の件', spans: [] },
  { text: 'コーヒーを3杯、会議は第2会議室', spans: [] },
  { text: 'パスワードを変更してください', spans: [] },
  { text: 'パスワードは後で送ります', spans: [] },
  { text: '品川区で打ち合わせ、11月24日(火)', spans: [] },
  { text: '売上は前年比 12.5% 増、目標 3,000 件', spans: [] },
  { text: 'version 1.2.3 released on 2026/11/24', spans: [] },
  { text: 'inputTokens 900, outputTokens 120', spans: [] },
  { text: '東京営業課の田中太郎さんにお願い', spans: [] },
  { text: 'Call the team at 3pm; ticket #4521', spans: [] },
  { text: '午後3時〜5時、2026年11月24日（火）', spans: [] },
  { text: 'マイナンバーカードの手続きについて', spans: [] },
  { text: '見積 ¥1,200,000（100万円超）', spans: [] },
  { text: 'Discord の相手 402938475612345602 から（Luhn を満たす18桁のID）', spans: [] },
];

export interface ValueSample {
  name: string;
  value: unknown;
  expected: unknown;
}

/** Structured values as they reach turn records: numbers, secret-named keys, keys holding PII. */
export const VALUE_SAMPLES: readonly ValueSample[] = [
  { name: 'mobile number stored as a JSON number', value: { phone: 9012345678 }, expected: { phone: '[PHONE]' } },
  { name: 'card number stored as a JSON number', value: { card: 4111111111111111 }, expected: { card: '[CARD]' } },
  { name: 'My Number stored as a JSON number', value: { n: 123456789018 }, expected: { n: '[MY_NUMBER]' } },
  {
    name: 'password key',
    value: { password: 'x', パスワード: 'abc' },
    expected: { password: '[SECRET]', パスワード: '[SECRET]' },
  },
  {
    name: 'secret-named keys',
    value: { apiKey: 'k', access_token: 't', DATABASE_URL: 'u', chatworkToken: 'c' },
    expected: { apiKey: '[SECRET]', access_token: '[SECRET]', DATABASE_URL: '[SECRET]', chatworkToken: '[SECRET]' },
  },
  {
    name: 'token counts are not secrets',
    value: { inputTokens: 900, outputTokens: 120, cacheReadTokens: 2400, tokenCount: 3 },
    expected: { inputTokens: 900, outputTokens: 120, cacheReadTokens: 2400, tokenCount: 3 },
  },
  {
    name: 'amounts and timestamps stay numbers',
    value: { amount: 120000, createdAt: 1764000000000, total: 2500000 },
    expected: { amount: 120000, createdAt: 1764000000000, total: 2500000 },
  },
  {
    name: 'audit fields stay',
    value: { authResult: 'DENIED', authReason: 'Z_OUT_OF_SCOPE_USER', taskId: '3f2b8c1e-9a4d-4c7b-8e21-0d5f6a7b8c9d' },
    expected: {
      authResult: 'DENIED',
      authReason: 'Z_OUT_OF_SCOPE_USER',
      taskId: '3f2b8c1e-9a4d-4c7b-8e21-0d5f6a7b8c9d',
    },
  },
  {
    name: 'full-width phone inside a nested value',
    value: { params: [{ note: '携帯０９０－１２３４－５６７８' }] },
    expected: { params: [{ note: '携帯[PHONE]' }] },
  },
  { name: 'e-mail as a key', value: { 'taro＠example.com': 1 }, expected: { '[EMAIL]': 1 } },
];
