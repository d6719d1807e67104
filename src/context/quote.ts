/**
 * Stored text as data, never instructions (issue 8): whatever people wrote and the bot stored —
 * memories, task and goal titles, summaries, names, tool results — is rendered for the model as inert,
 * single-line, quoted data. Line breaks (so no headings or new "sections"), heading markers, role-like
 * prefixes (`System:`, `システム：`), tag-like markup (`<system>`, `</context>`, `[INST]`) and code fences
 * are neutralised; the words themselves stay readable.
 */

/** Line breaks, tabs and Unicode line/paragraph separators. */
const BREAKS = /[\r\n\t\v\f\u0085\u2028\u2029]+/g;
/** A role or authority label followed by a colon, as a prompt would write it. */
const ROLE_PREFIX = new RegExp(
  // Not one already quoted (“System:”): neutralising twice leaves the text as once.
  '(?<!“)((?:\\b(?:system|assistant|human|user|developer|tool|admin(?:istrator)?)\\b' +
    '|システム|アシスタント|ユーザー|管理者|運営)\\s*[:：])',
  'giu',
);
/** Bracketed pseudo-tags such as [INST], [/system], [SYSTEM PROMPT]. */
const BRACKET_TAG = /\[(\/?\s*(?:inst|system|assistant|user|sys)\b[^\]]{0,40})\]/gi;

/** One piece of stored text as one inert line (untruncated). */
export function neutralise(text: string): string {
  return String(text)
    .replace(BREAKS, ' ')
    .replace(/</g, '‹')
    .replace(/>/g, '›')
    .replace(/`{3,}/g, "'''")
    .replace(/#+(?=\s|$)/g, (m) => '＃'.repeat(m.length))
    .replace(BRACKET_TAG, '［$1］')
    .replace(ROLE_PREFIX, '“$1”')
    .replace(/\s{2,}/g, ' ')
    .trim();
}

/** Most characters of one stored text shown to the model. */
export const QUOTE_MAX = 300;

/**
 * Stored text quoted for the context: one neutralised line in 「」 (brackets inside become 『』, so a
 * quote cannot be closed early), cut at {@link QUOTE_MAX} characters.
 */
export function quoted(text: string, max = QUOTE_MAX): string {
  const line = neutralise(text).replace(/「/g, '『').replace(/」/g, '』');
  const chars = [...line];
  return `「${chars.length > max ? `${chars.slice(0, max).join('')}…` : line}」`;
}

/** Every string inside a value neutralised (tool results sent back to the model), keys and structure kept. */
export function neutraliseValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return neutralise(value);
  if (depth > 20 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => neutraliseValue(v, depth + 1));
  const entries = Object.entries(value as Record<string, unknown>);
  return Object.fromEntries(entries.map(([k, v]) => [k, neutraliseValue(v, depth + 1)]));
}
