/**
 * Search tokens for Japanese and English text (R-X4), without a dictionary: Japanese runs (kanji,
 * katakana, 々, ー) give their bigrams and single characters, Latin words and numbers are lower-case words.
 * Hiragana separates words (particles and endings such as 「の」「して」 would match everything), so
 * 「経費の精算」 holds the words 経費 and 精算. Passages store their tokens in a GIN-indexed array; a query's
 * words must each be contained in a passage to count as matched.
 */

/** A run of Japanese characters other than hiragana. */
const CJK_RUN = /[\p{Script=Han}\p{Script=Katakana}ー々〆]+/gu;
/** A Latin word or number (one character is too little to search by). */
const WORD = /[\p{L}\p{N}]{2,}/gu;
/** What is left once Japanese runs and hiragana are taken out: Latin words and numbers. */
const NOT_LATIN = /[\p{Script=Han}\p{Script=Katakana}\p{Script=Hiragana}ー々〆]+/gu;

function normalise(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

/** The search words of a text: each Japanese run and each Latin word, with the tokens it needs. */
export function searchWords(text: string): string[][] {
  const s = normalise(text);
  const words: string[][] = [];
  const seen = new Set<string>();
  const add = (key: string, tokens: string[]): void => {
    if (tokens.length === 0 || seen.has(key)) return;
    seen.add(key);
    words.push(tokens);
  };
  for (const run of s.match(CJK_RUN) ?? []) {
    const chars = [...run].filter((c) => c !== 'ー' || run.length > 1);
    if (chars.length === 0) continue;
    if (chars.length === 1) add(run, chars);
    else add(run, [...new Set(chars.slice(1).map((c, i) => chars[i]! + c))]);
  }
  for (const w of s.replace(NOT_LATIN, ' ').match(WORD) ?? []) add(w, [w]);
  return words;
}

/** Every token a passage is found by: bigrams and single characters of Japanese runs, Latin words. */
export function passageTokens(text: string): string[] {
  const s = normalise(text);
  const out = new Set<string>();
  for (const run of s.match(CJK_RUN) ?? []) {
    const chars = [...run];
    chars.forEach((c, i) => {
      out.add(c);
      if (i + 1 < chars.length) out.add(c + chars[i + 1]!);
    });
  }
  for (const w of s.replace(NOT_LATIN, ' ').match(WORD) ?? []) out.add(w);
  return [...out];
}
