/**
 * Text scanning helpers shared by the proposal and reply checks: deep string collection, NFKC
 * normalisation and stateless pattern / word matching.
 */

/** NFKC-normalises (full-width → ASCII, half-width kana → full-width) for matching only. */
export function normaliseForScan(text: string): string {
  return text.normalize('NFKC');
}

/**
 * Every string inside a value (object keys included), depth-first in insertion order. Numbers and
 * bigints are included as decimal strings so that digit patterns (card numbers) are caught too.
 */
export function collectStrings(value: unknown): string[] {
  const out: string[] = [];
  const seen = new WeakSet<object>();
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (typeof v === 'number' || typeof v === 'bigint') out.push(String(v));
    else if (Array.isArray(v)) {
      if (seen.has(v)) return;
      seen.add(v);
      v.forEach(walk);
    } else if (v !== null && typeof v === 'object') {
      if (seen.has(v)) return;
      seen.add(v);
      for (const [k, child] of Object.entries(v)) {
        out.push(k);
        walk(child);
      }
    }
  };
  walk(value);
  return out;
}

/** Stateless copies of g/y patterns, built once per pattern (not per test). */
const statelessCopies = new WeakMap<RegExp, RegExp>();

/** Tests a pattern without depending on (or changing) its `lastIndex` (flags g/y are dropped). */
export function testPattern(pattern: RegExp, text: string): boolean {
  if (!pattern.global && !pattern.sticky) return pattern.test(text);
  let stateless = statelessCopies.get(pattern);
  if (!stateless) {
    stateless = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
    statelessCopies.set(pattern, stateless);
  }
  return stateless.test(text);
}

/** The first pattern that matches any of the texts (NFKC), or undefined. */
export function findPattern(texts: readonly string[], patterns: readonly RegExp[]): RegExp | undefined {
  const normalised = texts.map(normaliseForScan);
  return patterns.find((p) => normalised.some((t) => testPattern(p, t)));
}

/** The first word that occurs in any of the texts (NFKC, case-insensitive substring), or undefined. */
export function findWord(texts: readonly string[], words: readonly string[]): string | undefined {
  const normalised = texts.map((t) => normaliseForScan(t).toLowerCase());
  return words.find((w) => {
    const needle = normaliseForScan(w).toLowerCase();
    return needle.length > 0 && normalised.some((t) => t.includes(needle));
  });
}
