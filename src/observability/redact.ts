/**
 * PII redaction (R-O2, seed 001): applied to everything before it reaches turn records, audit rows or logs.
 * Values and keys are both redacted; a key that names a secret has its whole value replaced.
 *
 * Detection reads Japanese the way people type it: patterns run on a normalised copy of the text (NFKC,
 * so full-width digits, letters, `＠` and `（）` read as ASCII; `−` `―` and other dashes, and `ー` next to
 * a digit, read as `-`), and each match replaces the matching span of the ORIGINAL text. Rules run in
 * order and a span taken by one rule is masked for the next, so every span gets exactly one label.
 * Fail-closed: if redaction throws, the caller gets a placeholder, never the raw text.
 */

interface Rule {
  name: string;
  /** Run on the normalised copy; global. A named group `v` limits the redacted span to that group. */
  pattern: RegExp;
  /** Extra check on a match (Luhn for card numbers, check digit for My Number). */
  accept?: (match: string, scan: string, index: number) => boolean;
  /** Matched only to protect the span from later rules (ids, dates); the text is kept. */
  keep?: boolean;
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let n = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      n *= 2;
      if (n > 9) n -= 9;
    }
    sum += n;
  }
  return sum % 10 === 0;
}

/**
 * Card numbers: an issuer prefix 2–6 (so timestamps and order numbers pass), Luhn valid, 13–16 digits
 * written together or up to 19 in groups (17–19 digits in one run are ids such as Discord snowflakes).
 */
function isCard(match: string): boolean {
  const d = match.replace(/\D/g, '');
  const max = d.length === match.length ? 16 : 19;
  return d.length >= 13 && d.length <= max && /^[2-6]/.test(d) && luhn(d);
}

/** The check digit of a 12-digit My Number (individual number) is valid. */
export function isMyNumber(digits: string): boolean {
  if (!/^\d{12}$/.test(digits)) return false;
  let sum = 0;
  for (let n = 1; n <= 11; n++) {
    const p = Number(digits[11 - n]);
    sum += p * (n <= 6 ? n + 1 : n - 5);
  }
  const r = sum % 11;
  return Number(digits[11]) === (r <= 1 ? 0 : 11 - r);
}

const MY_NUMBER_LABEL = /(?:マイナンバー|個人番号|my\s*number)\D{0,8}$/i;

/** 4-4-4 with separators, a valid check digit, or a label such as 「マイナンバー」 just before it. */
function isMyNumberMatch(match: string, scan: string, index: number): boolean {
  if (/^\d{4}[ -]\d{4}[ -]\d{4}$/.test(match)) return true;
  const labelled = MY_NUMBER_LABEL.test(scan.slice(Math.max(0, index - 16), index));
  return labelled || isMyNumber(match.replace(/\D/g, ''));
}

const SECRET_LABEL =
  '(?<![A-Za-z])(?:password|passwd|passphrase|passcode|pwd|pin|token|secret|api[_ -]?key' +
  '|access[_ -]?token|パスワード|暗証番号|トークン|シークレット)';
const SECRET_VALUE = '(?<v>[^\\s、。,]*[\\x21-\\x7e][^\\s、。,]*)';
const ISO_TIME = /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?!\d)/g;
const TOKENS = new RegExp(
  [
    '\\b(?:sk|pk|rk)[-_][A-Za-z0-9_-]{16,}',
    '\\bxox[abpr]-[A-Za-z0-9-]{10,}',
    '\\bgh[pousr]_[A-Za-z0-9]{20,}',
    '\\bAKIA[0-9A-Z]{16}\\b',
  ].join('|'),
  'g',
);
/** +81 90-…, (03)1234-5678, 03(1234)5678, 0120-123-456, 0312345678. */
const PHONE = new RegExp(
  '(?<![\\d+-])(?:\\+81[ -]?(?:\\(0\\)|0)?\\d{1,4}|\\(0\\d{1,4}\\)|0\\d{1,4})' +
    '[ -]?\\(?\\d{1,4}\\)?[ -]?\\d{3,4}(?![\\d-])',
  'g',
);
const PLACE = '[\\p{Script=Han}\\p{Script=Katakana}ヶケ]';
const TOWN = '[\\p{Script=Han}\\p{Script=Katakana}ヶケのノ-]';
const BLOCK = '(?:\\d+丁目(?:\\d+番地?(?:\\d+号?)?)?|\\d+番地?(?:\\d+号?)?|\\d+-\\d+(?:-\\d+)?)';

/** Order matters: protected forms first, then the most specific patterns. */
// Repetitions that a failed match backtracks over are bounded (e-mail local part ≤ 64, labels ≤ 63,
// user/password ≤ 256): unbounded ones made a long run of letters quadratic — a 100 KB message blocked the
// process for seconds (found by the webhook fuzzer, issue 13).
const RULES: readonly Rule[] = [
  // Not PII, and must never be cut up by the number rules below: UUIDs (task ids…) and ISO timestamps.
  { name: 'KEEP', keep: true, pattern: /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi },
  { name: 'KEEP', keep: true, pattern: ISO_TIME },
  { name: 'URL_CREDENTIALS', pattern: /\b[a-z][a-z0-9+.-]{0,31}:\/\/[^\s:@/]{1,256}:[^\s@/]{1,256}@\S+/gi },
  { name: 'API_KEY', pattern: TOKENS },
  { name: 'API_KEY', pattern: /\b(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{16,}/g },
  // 「パスワード: hunter2」「password is hunter2」: only the value goes (it must contain an ASCII character,
  // so 「パスワードは後で送ります」 stays readable).
  { name: 'SECRET', pattern: new RegExp(`${SECRET_LABEL}\\s*(?:[:=]|は|\\bis\\b)\\s*${SECRET_VALUE}`, 'giu') },
  { name: 'EMAIL', pattern: /[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,}/g },
  // Absolute file paths of two or more segments (`/var/lib/hisho/data-ded0a0312345` in the start-up log, which an
  // operator copies to back the folder up): its hex and digits are no phone, card or My Number. After the key,
  // secret and e-mail rules (those still apply inside a path); a URL's path is not matched (no `/` after a word).
  { name: 'KEEP', keep: true, pattern: /(?<![\w/.~:-])\/(?:[\w.@%+~-]+\/)+[\w.@%+~-]*/g },
  // Not joined to a name by "_" (`20261122230000_knowledge_search`, a migration: Luhn-valid, not a card).
  { name: 'CARD', pattern: /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d_-])/g, accept: isCard },
  { name: 'MY_NUMBER', pattern: /(?<![\d-])\d{4}[ -]?\d{4}[ -]?\d{4}(?![\d-])/g, accept: isMyNumberMatch },
  // Bank accounts and passports (issue 33), only where a label says what the number is: 「口座番号 1234567」
  // 「普通 1234567」 "account no. 1234567"; 「パスポート TK1234567」 "passport number TK1234567".
  {
    name: 'BANK_ACCOUNT',
    pattern: /(?:口座|普通|当座|account\s*(?:number|no\.?)?)\D{0,16}?(?<![\d-])(?<v>\d{7})(?![\d-])/gi,
  },
  { name: 'PASSPORT', pattern: /(?:パスポート|旅券|passport)\D{0,16}?(?<v>[A-Z]{2}\d{7})(?!\d)/gi },
  { name: 'PHONE', pattern: PHONE },
  { name: 'POSTAL', pattern: /〒\s?\d{3}-?\d{4}(?!\d)|(?<![\d-])\d{3}-\d{4}(?![\d-])/g },
  // 「東京都渋谷区渋谷2-21-1」「大阪市北区梅田1-1-1」「千代田区丸の内1丁目2番3号」: a place ending in 市区町村郡
  // followed by a town and a block number (a bare 「品川区で会議」 or a date is not an address).
  { name: 'ADDRESS', pattern: new RegExp(`${PLACE}{1,8}[市区町村郡]${TOWN}{0,14}?${BLOCK}`, 'gu') },
  // Long random-looking tokens (hex / base64) that are not plain words or numbers.
  {
    name: 'SECRET',
    pattern: /\b(?=[A-Za-z0-9+/_-]*\d)(?=[A-Za-z0-9+/_-]*[A-Za-z])[A-Za-z0-9+/_-]{32,}={0,2}/g,
    accept: isRandomToken,
  },
];

/**
 * A long token is a secret unless it reads as words: an identifier such as a migration name
 * (`20261122190700_confirmation_rounds_and_outbox_owner`) has several all-lowercase words of three or more
 * letters; a key (`sk-ant-api03-…`, hex, base64) has at most a prefix word or two.
 */
function isRandomToken(match: string): boolean {
  const parts = match.split(/[_/+-]+/).filter((x) => x.length > 0);
  const words = parts.filter((x) => /^[a-z]{3,}$/.test(x)).length;
  return !(parts.length >= 3 && words * 2 >= parts.length);
}

/** Dashes people type between digits (after NFKC): minus, bars, en/em dashes, full-width hyphen. */
const DASHES = new Set(['−', '―', '‐', '‑', '‒', '–', '—', '﹣', '－']);
/** The katakana long vowel mark is a dash only next to a digit (「090ー1234」, not 「パスワード」). */
const LONG_VOWEL = 'ー';
/** Masks a taken span in the scan copy (never part of any pattern). */
const MASK = '\u0000';

/** The normalised copy and, per UTF-16 unit of it, the span of the original it came from. */
interface ScanCopy {
  scan: string;
  from: number[];
  to: number[];
}

/** NFKC of single non-ASCII code points already seen (dashes → `-`), split into UTF-16 units. */
const normalised = new Map<string, string[]>();
const MAX_NORMALISED = 20_000;

function normaliseCodePoint(ch: string): string[] {
  let units = normalised.get(ch);
  if (!units) {
    let n = ch.normalize('NFKC');
    if (DASHES.has(n)) n = '-';
    units = n.split('');
    if (normalised.size < MAX_NORMALISED) normalised.set(ch, units);
  }
  return units;
}

/** NFKC per code point (dashes → `-`), remembering where each normalised unit came from. */
function scanCopy(text: string): ScanCopy {
  const units: string[] = [];
  const from: number[] = [];
  const to: number[] = [];
  for (let i = 0; i < text.length;) {
    const code = text.charCodeAt(i);
    if (code < 0x80) {
      // ASCII is its own NFKC.
      units.push(text[i]!);
      from.push(i);
      to.push(i + 1);
      i++;
      continue;
    }
    const ch = String.fromCodePoint(text.codePointAt(i)!);
    for (const unit of normaliseCodePoint(ch)) {
      units.push(unit);
      from.push(i);
      to.push(i + ch.length);
    }
    i += ch.length;
  }
  const digit = (k: number) => k >= 0 && k < units.length && units[k]! >= '0' && units[k]! <= '9';
  for (let k = 0; k < units.length; k++) if (units[k] === LONG_VOWEL && (digit(k - 1) || digit(k + 1))) units[k] = '-';
  return { scan: units.join(''), from, to };
}

/** Redacts PII in one string. Throws only on a programming error (see `safeRedactText`). */
export function redactText(text: string): string {
  if (text.length === 0) return text;
  const copy = scanCopy(text);
  let scan = copy.scan;
  const spans: { start: number; end: number; label: string }[] = [];
  for (const rule of RULES) {
    const taken: [number, number][] = [];
    for (const m of scan.matchAll(rule.pattern)) {
      if (m[0].length === 0 || m[0].includes(MASK)) continue;
      if (rule.accept && !rule.accept(m[0], scan, m.index)) continue;
      const value = m.groups?.v;
      const start = value !== undefined ? m.index + m[0].lastIndexOf(value) : m.index;
      const end = value !== undefined ? start + value.length : m.index + m[0].length;
      if (end <= start) continue;
      taken.push([start, end]);
      if (!rule.keep) spans.push({ start: copy.from[start]!, end: copy.to[end - 1]!, label: `[${rule.name}]` });
    }
    for (const [s, e] of taken) scan = scan.slice(0, s) + MASK.repeat(e - s) + scan.slice(e);
  }
  if (spans.length === 0) return text;
  spans.sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const s of spans) {
    if (s.start < at) continue;
    out += text.slice(at, s.start) + s.label;
    at = s.end;
  }
  return out + text.slice(at);
}

export const REDACTION_FAILED = '[REDACTION_FAILED]';

/** Fail-closed wrapper: the raw text is never returned when redaction fails. */
export function safeRedactText(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  try {
    return redactText(String(text));
  } catch {
    return REDACTION_FAILED;
  }
}

/** Words of a key: `accessToken` → access, token; `DATABASE_URL` → database, url. */
function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .map((w) => w.toLowerCase())
    .filter((w) => w.length > 0);
}

const SECRET_WORDS = new Set([
  'password',
  'passwd',
  'passphrase',
  'passcode',
  'pwd',
  'pin',
  'secret',
  'token',
  'apikey',
  'authorization',
  'cookie',
  'credential',
  'credentials',
  'signature',
  'databaseurl',
  'privatekey',
  'パスワード',
  '暗証番号',
]);
const SECRET_PAIRS = new Set(['api key', 'private key', 'secret key', 'access key', 'database url', 'session id']);
/** Compound words such as `chatworktoken`, `webhooksecret`. */
const SECRET_SUFFIX = /(?:token|secret|password|passwd|apikey)$/;
/** A key ending in one of these counts or describes a secret, it is not one (`tokenCount`, `passwordLength`). */
const DESCRIPTIVE_TAIL = new Set([
  'count',
  'counts',
  'total',
  'limit',
  'limits',
  'length',
  'usage',
  'type',
  'kind',
  'policy',
]);

/**
 * True for keys that name a secret (`password`, `api_key`, `accessToken`, `DATABASE_URL`,
 * `パスワード`); false for keys that merely mention one (`inputTokens`, `tokenCount`, `authResult`).
 */
export function isSecretKey(key: string): boolean {
  const words = keyWords(key);
  if (words.length === 0 || DESCRIPTIVE_TAIL.has(words.at(-1)!)) return false;
  if (words.some((w) => SECRET_WORDS.has(w) || SECRET_SUFFIX.test(w))) return true;
  return words.some((w, i) => i > 0 && SECRET_PAIRS.has(`${words[i - 1]} ${w}`));
}

/**
 * A number as PII would be typed: card and My Number rules apply to its digits, and a 10-digit
 * 70/80/90… number is a mobile number that lost its leading zero in JSON.
 */
function redactNumber(value: number): number | string {
  if (!Number.isSafeInteger(value) || Math.abs(value) < 1_000_000_000) return value;
  const digits = String(Math.abs(value));
  if (/^[789]0\d{8}$/.test(digits)) return '[PHONE]';
  const text = redactText(digits);
  return text === digits ? value : text;
}

/**
 * Redacted object keys. Keys are the vocabulary of the recorded shapes (`rule`, `priority`, `parameters` …),
 * the same on every turn: each is redacted once per process. Bounded; keys longer than 64 characters are not kept.
 */
const KEY_MEMO = new Map<string, { text: string; secret: boolean }>();
const KEY_MEMO_MAX = 4096;

function redactKey(k: string): { text: string; secret: boolean } {
  const hit = KEY_MEMO.get(k);
  if (hit) return hit;
  const r = { text: redactText(k), secret: isSecretKey(k) };
  if (k.length <= 64) {
    if (KEY_MEMO.size >= KEY_MEMO_MAX) KEY_MEMO.clear();
    KEY_MEMO.set(k, r);
  }
  return r;
}

/**
 * Redacts each distinct string once: one instance serves one written record (a turn's row, whose columns
 * repeat the same parameters, results and Guardian trace values), so a value is scanned once however many
 * layers carry it. Short-lived by design: it holds raw text only while that record is prepared.
 */
export class Redactor {
  private readonly memo = new Map<string, string>();

  text(text: string): string {
    const hit = this.memo.get(text);
    if (hit !== undefined) return hit;
    const out = redactText(text);
    this.memo.set(text, out);
    return out;
  }

  /** Deep-redacts a JSON-like value: keys and values; secret-named keys lose their value. */
  value(value: unknown, depth = 0): unknown {
    if (depth > 20) return '[TOO_DEEP]';
    if (value === null || value === undefined) return value;
    if (typeof value === 'string') return this.text(value);
    if (typeof value === 'number') return redactNumber(value);
    if (typeof value === 'boolean') return value;
    if (typeof value === 'bigint') return this.text(value.toString());
    if (Array.isArray(value)) return value.map((v) => this.value(v, depth + 1));
    if (value instanceof Date) return value.toISOString();
    if (typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        const key = redactKey(k);
        out[key.text] = key.secret ? '[SECRET]' : this.value(v, depth + 1);
      }
      return out;
    }
    return '[UNSERIALISABLE]';
  }

  /** Fail-closed: the raw text is never returned when redaction fails. */
  safeText(text: string | null | undefined): string | null {
    if (text === null || text === undefined) return null;
    try {
      return this.text(String(text));
    } catch {
      return REDACTION_FAILED;
    }
  }

  /** Fail-closed wrapper for structured values. */
  safeValue(value: unknown): unknown {
    try {
      return this.value(value);
    } catch {
      return REDACTION_FAILED;
    }
  }
}

/** Deep-redacts a JSON-like value: keys and values; secret-named keys lose their value. */
export function redactValue(value: unknown, depth = 0): unknown {
  return new Redactor().value(value, depth);
}

/** Fail-closed wrapper for structured values. */
export function safeRedactValue(value: unknown): unknown {
  try {
    return redactValue(value);
  } catch {
    return REDACTION_FAILED;
  }
}
