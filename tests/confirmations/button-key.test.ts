import { randomUUID } from 'node:crypto';
import { buttonKey, parseButtonKey } from '../../src/confirmations/answer-parser';
import { formKey, parseFormKey } from '../../src/confirmations/button-key';

const SHAPE = /^h1:[A-Za-z0-9_-]{1,90}$/;

describe('button keys', () => {
  it('encodes a UUID as 32 hex digits plus _a/_d and round-trips', () => {
    const id = randomUUID();
    const a = buttonKey(id, 'approve');
    const d = buttonKey(id, 'deny');
    expect(a).toBe(`h1:${id.replace(/-/g, '')}_a`);
    expect(d).toBe(`h1:${id.replace(/-/g, '')}_d`);
    for (const k of [a, d]) expect(k).toMatch(SHAPE);
    expect(parseButtonKey(a)).toEqual({ pendingId: id, answer: 'approve' });
    expect(parseButtonKey(d)).toEqual({ pendingId: id, answer: 'deny' });
  });

  it('round-trips non-UUID ids through base64url', () => {
    for (const id of ['cuid_abc123', 'x', 'ffffffffffffffffffffffffffffffff', 'ペンディング-1', 'a:b/c+d']) {
      const k = buttonKey(id, 'deny');
      expect(k).toMatch(SHAPE);
      expect(k.length).toBeLessThanOrEqual(100);
      expect(parseButtonKey(k)).toEqual({ pendingId: id, answer: 'deny' });
    }
  });

  it('carries the confirmation round, so a click answers the question it was shown with', () => {
    const id = randomUUID();
    const k = buttonKey(id, 'approve', 1);
    expect(k).toBe(`h1:${id.replace(/-/g, '')}_a1`);
    expect(k).toMatch(SHAPE);
    expect(parseButtonKey(k)).toEqual({ pendingId: id, answer: 'approve', round: 1 });
    expect(parseButtonKey(buttonKey(id, 'deny', 0))).toEqual({ pendingId: id, answer: 'deny', round: 0 });
    expect(buttonKey('a'.repeat(60), 'deny', 9).length).toBeLessThanOrEqual(100);
    expect(() => buttonKey(id, 'approve', 10)).toThrow();
    expect(parseButtonKey(`h1:${id.replace(/-/g, '')}_a12`)).toBeNull();
  });

  it('refuses ids that do not fit', () => {
    expect(() => buttonKey('a'.repeat(80), 'approve')).toThrow();
    expect(() => buttonKey('', 'approve')).toThrow();
  });

  it.each([
    '',
    'h1:',
    'h1:_a',
    'h2:0123456789abcdef0123456789abcdef_a',
    'h1:0123456789abcdef0123456789abcdef_x',
    'h1:0123456789abcdef0123456789abcdef:a',
    'h1:0123456789ABCDEF0123456789ABCDEF_a',
    'h1:0123456789abcdef_a',
    'h1:0123456789abcdef0123456789abcdef_a ',
    ' h1:0123456789abcdef0123456789abcdef_a',
    'h1:x_a',
    'h1:x!!_a',
    `h1:x${'A'.repeat(95)}_a`,
    'h1:xYQ_a'.replace('YQ', 'YR'),
    'h1:0123456789abcdef0123456789abcdef_a_a',
  ])('parse(%j) → null', (k) => expect(parseButtonKey(k)).toBeNull());

  it('returns null for non-strings', () => {
    expect(parseButtonKey(undefined)).toBeNull();
    expect(parseButtonKey(42)).toBeNull();
  });
});

describe('form keys (Discord 「変更する」, issue 44)', () => {
  const id = '0f1e2d3c-4b5a-4697-8877-665544332211';

  it('round-trip the pending action and its round, and never read as an answer', () => {
    const key = formKey(id, 1);
    expect(key).toBe('hf:0f1e2d3c4b5a46978877665544332211_1');
    expect(parseFormKey(key)).toEqual({ pendingId: id, round: 1 });
    expect(parseButtonKey(key)).toBeNull();
    expect(parseFormKey(buttonKey(id, 'approve', 1))).toBeNull();
  });

  it('refuse anything malformed', () => {
    for (const bad of ['hf:', 'hf:zz_1', 'hf:0f1e2d3c4b5a46978877665544332211', 'hf:x!!_0', 42, null])
      expect(parseFormKey(bad)).toBeNull();
    expect(() => formKey('', 0)).toThrow();
  });
});
