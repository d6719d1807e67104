/**
 * What addresses someone rather than saying something (PLATFORMS.md A3): the name that follows a
 * mention tag (ChatWork's TO and 返信 buttons write `[To:9999]Hishoさん` and a line break), and a leading
 * "Hisho、" typed in plain text. Deterministic parsing (confirmation answers) reads a message without
 * them; the LLM always sees the whole message. Pure.
 */

/** Honorifics people put after a name (the ChatWork TO button writes さん). */
export const HONORIFIC = '(?:さん|様|さま|サマ|殿|どの|くん|君|ちゃん|氏|先輩|宛て?)';

/** Blanks between words, including the full-width space. */
const BLANK = '[ \\t\\u3000]';

/** Characters that end a sentence or clause: text containing them is not just a name. */
const PUNCTUATION = '、。，．,.!！?？「」『』()（）:：;；';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A name as a pattern: case-insensitive where it has case, any run of blanks where it has blanks. */
function namePattern(name: string): string {
  return name
    .trim()
    .split(/[\s\u3000]+/)
    .map(escapeRegExp)
    .join(`${BLANK}*`);
}

const compiled = new Map<string, RegExp>();

/** A pattern built once per list of names (the names change only when GET /me answers). */
function memo(kind: string, names: readonly string[], build: () => RegExp): RegExp {
  const key = `${kind}\u0000${names.join('\u0000')}`;
  let re = compiled.get(key);
  if (!re) {
    if (compiled.size > 100) compiled.clear();
    re = build();
    compiled.set(key, re);
  }
  return re;
}

/** The usable names (trimmed, non-empty, longest first so "Hisho Bot" wins over "Hisho"). */
function usableNames(names: readonly string[]): string[] {
  return [...new Set(names.map((n) => n.trim()).filter((n) => n.length > 0 && n.length <= 50))].sort(
    (a, b) => b.length - a.length,
  );
}

/**
 * A pattern for the addressee written right after a mention tag, up to (not including) the rest of
 * the line: a known name with an optional honorific; the whole rest of the line when it is a name
 * with an honorific and no punctuation (「Taro Tanakaさん」); or one word ending in an honorific
 * followed by a blank (「田中さん はい」).
 */
export function addresseeAfterTag(names: readonly string[]): RegExp {
  return memo('tag', names, () => buildAddresseeAfterTag(names));
}

function buildAddresseeAfterTag(names: readonly string[]): RegExp {
  const wordChar = `[^\\s\\[${PUNCTUATION}]`;
  const known = usableNames(names).map(namePattern);
  const alternatives = [
    ...(known.length > 0 ? [`@?(?:${known.join('|')})${BLANK}*${HONORIFIC}?(?=$|[\\s${PUNCTUATION}]|\\[)`] : []),
    `${wordChar}(?:[^\\n\\[${PUNCTUATION}]{0,40}${wordChar})?${BLANK}?${HONORIFIC}${BLANK}*(?=\\n|$|\\[)`,
    `${wordChar}{1,30}${HONORIFIC}(?=${BLANK}|\\n|$|\\[)`,
  ];
  return new RegExp(`^${BLANK}*(?:${alternatives.join('|')})`, 'iu');
}

/**
 * Removes a leading address to the bot typed in plain text: 「Hisho、はい」「@Hisho はい」
 * 「ソウルくん　はい」 → 「はい」. Only the given names count; the rest of the text is untouched.
 */
export function stripLeadingName(text: string, names: readonly string[]): string {
  return text
    .replace(
      memo('lead', names, () => buildLeadingName(names)),
      '',
    )
    .trim();
}

function buildLeadingName(names: readonly string[]): RegExp {
  const known = usableNames(names).map(namePattern);
  if (known.length === 0) return /(?!)/u;
  return new RegExp(`^(?:\\s*@?(?:${known.join('|')})${BLANK}*${HONORIFIC}?(?:[\\s、,，:：!！]+|$))+`, 'iu');
}
