/**
 * PII redaction (R-O2, seed 001): applied to everything before it reaches turn records, audit rows or logs.
 * Values and keys are both redacted; a key that names a secret has its whole value replaced.
 * Fail-closed: if redaction throws, the caller gets a placeholder, never the raw text.
 */

interface Rule {
  name: string;
  pattern: RegExp;
  /** Extra check on a match (e.g. Luhn for card numbers). */
  accept?: (match: string) => boolean;
}

function luhn(digits: string): boolean {
  const d = digits.replace(/\D/g, '');
  if (d.length < 13 || d.length > 19) return false;
  let sum = 0;
  for (let i = 0; i < d.length; i++) {
    let n = Number(d[d.length - 1 - i]);
    if (i % 2 === 1) {
      n *= 2;
      if (n > 9) n -= 9;
    }
    sum += n;
  }
  return sum % 10 === 0;
}

/**
 * Order matters: the most specific patterns first. Repetitions that a failed match backtracks over are
 * bounded (e-mail local part ≤ 64, user/password ≤ 256): unbounded ones made a long run of letters
 * quadratic — a 100 KB message blocked the process for seconds.
 */
const RULES: Rule[] = [
  { name: 'API_KEY', pattern: /\b(?:sk|pk|rk|xox[abpr])[-_][A-Za-z0-9_\-]{16,}\b/g },
  { name: 'API_KEY', pattern: /\b(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=\-]{16,}/g },
  { name: 'URL_CREDENTIALS', pattern: /\b[a-z][a-z0-9+.-]{0,31}:\/\/[^\s:@/]{1,256}:[^\s@/]{1,256}@[^\s]+/gi },
  { name: 'EMAIL', pattern: /[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9.\-]{1,253}\.[A-Za-z]{2,}/g },
  { name: 'CARD', pattern: /\b(?:\d[ \-]?){12,18}\d\b/g, accept: luhn },
  { name: 'MY_NUMBER', pattern: /(?<!\d)\d{4}[ \-]?\d{4}[ \-]?\d{4}(?!\d)/g },
  { name: 'PHONE', pattern: /(?<![\d\-])(?:\+81[ \-]?|0)\d{1,4}[ \-]?\d{1,4}[ \-]?\d{3,4}(?![\d\-])/g },
  { name: 'POSTAL', pattern: /〒\s?\d{3}[-－]?\d{4}|(?<!\d)\d{3}[-－]\d{4}(?!\d)/g },
  {
    name: 'ADDRESS',
    pattern: /(?:東京都|北海道|(?:京都|大阪)府|[^\s、。]{2,3}県)[^\s、。]{1,12}?[市区町村郡][^\s、。]{0,20}?\d+(?:[-－丁目番地号の]\d*)*/g,
  },
  // Long random-looking tokens (hex / base64) that are not plain words or numbers.
  { name: 'SECRET', pattern: /\b(?=[A-Za-z0-9+/_\-]*\d)(?=[A-Za-z0-9+/_\-]*[A-Za-z])[A-Za-z0-9+/_\-]{32,}={0,2}/g },
];

/** Keys whose values are secrets whatever they look like. */
const SECRET_KEY = /pass(word)?|secret|token|api[-_]?key|authorization|cookie|credential|database_?url|signature/i;

/** Redacts PII in one string. Throws only on a programming error (see `safeRedactText`). */
export function redactText(text: string): string {
  let out = text;
  for (const rule of RULES) {
    out = out.replace(rule.pattern, (m) => (rule.accept && !rule.accept(m) ? m : `[${rule.name}]`));
  }
  return out;
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

/** Deep-redacts a JSON-like value: keys and values; secret-named keys lose their value. */
export function redactValue(value: unknown, depth = 0): unknown {
  if (depth > 20) return '[TOO_DEEP]';
  if (value === null || value === undefined) return value;
  if (typeof value === 'string') return redactText(value);
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const key = redactText(k);
      out[key] = SECRET_KEY.test(k) ? '[SECRET]' : redactValue(v, depth + 1);
    }
    return out;
  }
  return '[UNSERIALISABLE]';
}

/** Fail-closed wrapper for structured values. */
export function safeRedactValue(value: unknown): unknown {
  try {
    return redactValue(value);
  } catch {
    return REDACTION_FAILED;
  }
}
