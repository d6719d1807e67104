import {
  REDACTION_FAILED,
  Redactor,
  isSecretKey,
  redactText,
  redactValue,
  safeRedactText,
  safeRedactValue,
} from '../../src/observability/redact';
import { TEXT_SAMPLES, VALUE_SAMPLES, type TextSample } from './redaction-samples';

/** The text with every labelled span replaced by its label (spans are found in order). */
function expectedOf(sample: TextSample): string {
  let out = '';
  let rest = sample.text;
  for (const [span, label] of sample.spans) {
    const at = rest.indexOf(span);
    if (at < 0) throw new Error(`span ${span} not found in sample ${sample.text}`);
    out += `${rest.slice(0, at)}[${label}]`;
    rest = rest.slice(at + span.length);
  }
  return out + rest;
}

describe('the labelled redaction set (issue 8)', () => {
  it('has at least 40 Japanese and English samples, with negatives', () => {
    expect(TEXT_SAMPLES.length + VALUE_SAMPLES.length).toBeGreaterThanOrEqual(40);
    expect(TEXT_SAMPLES.filter((s) => s.spans.length === 0).length).toBeGreaterThanOrEqual(15);
  });

  it.each(TEXT_SAMPLES.map((s) => [s.text, s] as const))('%s', (_text, sample) => {
    expect(redactText(sample.text)).toBe(expectedOf(sample));
  });

  it('redacts 100% of the labelled spans and changes nothing else (whole set at once)', () => {
    const wrong = TEXT_SAMPLES.filter((s) => redactText(s.text) !== expectedOf(s)).map((s) => s.text);
    expect(wrong).toEqual([]);
    const values = VALUE_SAMPLES.filter((s) => JSON.stringify(redactValue(s.value)) !== JSON.stringify(s.expected)).map(
      (s) => s.name,
    );
    expect(values).toEqual([]);
  });

  it.each(VALUE_SAMPLES.map((s) => [s.name, s] as const))('value: %s', (_name, sample) => {
    expect(redactValue(sample.value)).toEqual(sample.expected);
  });

  it('agrees with the Guardian: the full-width My Number it blocks is redacted too', () => {
    expect(redactText('マイナンバー：１２３４－５６７８－９０１２')).toBe('マイナンバー：[MY_NUMBER]');
  });

  it.each([
    ['password', true],
    ['api_key', true],
    ['accessToken', true],
    ['DATABASE_URL', true],
    ['x-chatworktoken', true],
    ['Authorization', true],
    ['inputTokens', false],
    ['cacheWriteTokens', false],
    ['tokenCount', false],
    ['authResult', false],
    ['maxTokens', false],
    ['passwordPolicy', false],
  ])('key %s is a secret key: %s', (key, secret) => {
    expect(isSecretKey(key)).toBe(secret);
  });
});

describe('PII redaction (R-O2)', () => {
  it.each([
    ['email', '連絡は taro.tanaka+work@example.co.jp まで', '[EMAIL]', 'example.co.jp'],
    ['mobile phone', '携帯 090-1234-5678 に', '[PHONE]', '1234-5678'],
    ['landline without dashes', '電話は0312345678です', '[PHONE]', '0312345678'],
    ['international phone', 'call +81 90 1234 5678', '[PHONE]', '1234 5678'],
    ['postal code', '〒150-0002 渋谷', '[POSTAL]', '150-0002'],
    ['street address', '住所は東京都渋谷区渋谷2-21-1です', '[ADDRESS]', '渋谷2-21-1'],
    ['card number (Luhn valid)', 'カード 4111 1111 1111 1111 で', '[CARD]', '4111 1111'],
    ['マイナンバー', 'マイナンバーは 1234-5678-9012 です', '[MY_NUMBER]', '5678-9012'],
    ['API key', 'key sk-ant-api03-abcdefghijklmnopqrstuvwx', '[API_KEY]', 'abcdefghijklmnop'],
    ['bearer token', 'Authorization: Bearer abcdefghijklmnop0123456789', '[API_KEY]', 'abcdefghijklmnop0123'],
    ['database URL with password', 'postgresql://app:s3cr3t@db.internal:5432/hisho', '[URL_CREDENTIALS]', 's3cr3t'],
  ])('%s', (_name, input, marker, gone) => {
    const out = redactText(input);
    expect(out).toContain(marker);
    expect(out).not.toContain(gone);
  });

  it('leaves ordinary text, dates, times and amounts alone', () => {
    const text = '明日 2026-11-23 の 15:00 から会議、予算は 120000 円、タスク 3 件';
    expect(redactText(text)).toBe(text);
  });

  it('full-width digits and dashes are read the same on every call (normalised characters are remembered)', () => {
    const text = '携帯は０９０ー１２３４－５６７８、メールは ｔａｎａｋａ＠ｅｘａｍｐｌｅ．ｃｏｍ です';
    const first = redactText(text);
    expect(first).toBe('携帯は[PHONE]、メールは [EMAIL] です');
    expect(redactText(text)).toBe(first);
    expect(redactText(`再送: ${text}`)).toBe(`再送: ${first}`);
  });

  it('does not treat a random 16-digit number that fails Luhn as a card', () => {
    expect(redactText('注文番号 1234567812345678')).not.toContain('[CARD]');
  });

  it('keeps identifiers that start with a timestamp (migration names in the start-up log)', () => {
    // 20261122230000 passes the Luhn check; joined to a name by "_" it is an identifier, not a card.
    const names = '20261122230000_knowledge_search, 20261122235900_work_queue_open_indexes';
    expect(redactText(`migrations applied: ${names}`)).toBe(`migrations applied: ${names}`);
    expect(redactText('カード 20261122230000 です')).toBe('カード [CARD] です');
  });

  it('redacts keys and values in nested objects; secret-named keys lose their value', () => {
    const out = redactValue({
      'taro@example.com': 'ok',
      nested: [{ apiKey: 'whatever', note: '090-1111-2222' }],
      password: 'x',
    }) as Record<string, unknown>;
    expect(Object.keys(out)).toContain('[EMAIL]');
    expect(JSON.stringify(out)).not.toContain('taro@example.com');
    expect(JSON.stringify(out)).not.toContain('whatever');
    expect(JSON.stringify(out)).not.toContain('1111-2222');
    expect(out.password).toBe('[SECRET]');
  });

  it('fails closed: when redaction throws, the raw value is never returned', () => {
    const evil = {
      toString() {
        throw new Error('boom');
      },
    } as unknown as string;
    expect(safeRedactText(evil)).toBe(REDACTION_FAILED);
    const hostile = Object.defineProperty({}, 'x', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    expect(safeRedactValue(hostile)).toBe(REDACTION_FAILED);
  });

  // Found by fuzzing the webhook (npm run proof): a 100 KB message of one long run (a pasted log line,
  // base64, "xxxx…") made the EMAIL and URL_CREDENTIALS patterns backtrack quadratically — seconds of
  // blocked event loop per call, claims expiring, replies posted twice. At 1 MB (the largest webhook body) linear
  // patterns take well under a second even on a loaded 2-core machine, while quadratic ones take minutes: the bound
  // separates the two without depending on how busy the machine is.
  it.each([
    ['a run of letters', 'x'.repeat(1_000_000)],
    ['a run of digits', '9'.repeat(1_000_000)],
    ['dotted words', 'a.'.repeat(500_000)],
  ])('redacts %s of 1 MB without catastrophic backtracking', (_name, text) => {
    const t0 = performance.now();
    expect(redactText(`${text} tanaka@example.com`)).not.toContain('tanaka@example.com');
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it('still redacts e-mail addresses and credentials in URLs after long runs', () => {
    const tail = '連絡は taro.tanaka+work@example.co.jp、接続は postgres://app:s3cret@db.internal:5432/x';
    const out = redactText(`${'x'.repeat(5000)} ${tail}`);
    expect(out).toContain('[EMAIL]');
    expect(out).not.toContain('example.co.jp');
    expect(out).not.toContain('s3cret');
  });
});

describe('Redactor (one per written record: each distinct value scanned once)', () => {
  it('gives the same result as redacting each layer on its own, secrets and PII included', () => {
    const params = { assignee: '田中太郎', note: '連絡先 tanaka@example.co.jp / 090-1234-5678', apiKey: 'sk-abc' };
    const row = { proposals: [{ parameters: params }], execution: { output: params }, password: 'hunter2' };
    const r = new Redactor();
    const once = r.value(row);
    expect(once).toEqual(redactValue(row));
    expect(JSON.stringify(once)).not.toContain('tanaka@example.co.jp');
    expect(JSON.stringify(once)).not.toContain('090-1234-5678');
    expect(JSON.stringify(once)).not.toContain('hunter2');
    expect(JSON.stringify(once)).not.toContain('sk-abc');
    // The same instance again (memoised values and keys) still redacts.
    expect(r.value(row)).toEqual(once);
    expect(r.safeText('メールは tanaka@example.co.jp')).toBe(redactText('メールは tanaka@example.co.jp'));
    expect(r.safeText(null)).toBeNull();
  });
});
