/**
 * The typing slips behind most YAML syntax errors in a hand-edited directory file, found on the lines up to the
 * one the parser stopped at: a full-width colon or space typed with the Japanese IME on (`level：5`, an
 * ideographic space before `level: 5`), a tab, a colon without the space after it, or a key out of line with its
 * neighbours (to the left, or to the right of a `key: value` line). The parser's own messages (7–10 lines of
 * "Implicit keys need to be on a single line", "Nested mappings are not allowed …") name none of them; a slip is
 * said as what to type instead. `findFullWidthSlip` finds the same IME slips in a file that parses but whose
 * values the directory refuses (`level: ６`).
 */
export type YamlSlip =
  | { kind: 'full_width_colon'; line: number; text: string; fixed: string }
  | { kind: 'full_width_space'; line: number }
  | { kind: 'full_width_char'; line: number; text: string; fixed: string }
  | { kind: 'tab'; line: number }
  | { kind: 'no_space'; line: number; text: string; fixed: string }
  | { kind: 'indent'; line: number; indent: number; expected: number };

const FULL_WIDTH_SPACE = '\u3000';

/** A key at the start of a line (after `- ` for a list item), then its separator and the rest. */
const KEY = /^([ \t\u3000]*(?:-[ \t]+)?)([^\s#:："'{}[\],&*!|>%@`][^:：#]*?)([:：])(.*)$/;

/** The first slip on lines 1…`errorLine` (1-based), or null when none explains the error. */
export function findYamlSlip(text: string, errorLine: number, parserMessage: string): YamlSlip | null {
  const lines = text.split(/\r?\n/);
  let inBlockScalar = -1;
  const last = Math.min(errorLine, lines.length);
  for (let i = 0; i < last; i++) {
    const raw = lines[i]!;
    const line = i + 1;
    const lead = /^[ \t\u3000]*/.exec(raw)![0];
    if (raw.trim() === '' || raw.trimStart().startsWith('#')) continue;
    // Inside a `key: |` block, text is the person's own: colons and spaces there are content.
    if (inBlockScalar >= 0) {
      if (lead.length > inBlockScalar) continue;
      inBlockScalar = -1;
    }
    if (lead.includes('\t')) return { kind: 'tab', line };
    if (lead.includes(FULL_WIDTH_SPACE)) return { kind: 'full_width_space', line };
    const m = KEY.exec(raw);
    if (!m) continue;
    const [, before, key, sep, rest] = m as unknown as [string, string, string, string, string];
    const value = rest.replace(/^[ \u3000]+/, '');
    if (sep === ':' && (key.includes(FULL_WIDTH_SPACE) || rest.startsWith(FULL_WIDTH_SPACE)))
      return fullWidthChar(line, raw.slice(before.length).trimEnd(), key, value);
    if (sep === '：') {
      const fixed = `${key.trim()}: ${value}`.trimEnd();
      return { kind: 'full_width_colon', line, text: raw.slice(before.length).trimEnd(), fixed };
    }
    if (rest !== '' && !/^[ \t]/.test(rest) && !/^\/\//.test(rest) && /^[\p{L}\p{N}"'[{]/u.test(rest)) {
      // `level:5` (a URL's `https://` or a time's `09:00` inside a value never starts a line as a key).
      if (!/^\d+$/.test(key.trim()))
        return { kind: 'no_space', line, text: raw.slice(before.length).trimEnd(), fixed: `${key.trim()}: ${rest}` };
    }
    if (/^[|>][-+]?\s*$/.test(value)) inBlockScalar = lead.length + (before.length - lead.length);
  }
  if (/same column|without - indicator/.test(parserMessage)) return indentSlip(lines, errorLine);
  if (/Nested mappings are not allowed in compact mappings/.test(parserMessage)) return deeperKeySlip(lines, errorLine);
  return null;
}

/**
 * A key indented deeper than the `key: value` line above it (`name: 山田一郎` then `      reading: …`): the parser
 * reads both lines as one key and stops at the upper one; the slip is the deeper line.
 */
function deeperKeySlip(lines: string[], errorLine: number): YamlSlip | null {
  const above = lines[errorLine - 1];
  if (above === undefined || !/:[ \t]+\S/.test(above)) return null;
  const expected = /^ *(?:- )?/.exec(above)![0].length;
  for (let i = errorLine; i < lines.length; i++) {
    const next = lines[i]!;
    if (next.trim() === '' || next.trimStart().startsWith('#')) continue;
    const indent = /^ */.exec(next)![0].length;
    return indent > expected && KEY.test(next) ? { kind: 'indent', line: i + 1, indent, expected } : null;
  }
  return null;
}

/** Half-width spaces and digits for the IME's full-width ones (`level：`, `６`, U+3000). */
const halfWidth = (s: string) =>
  s.replace(/\u3000/g, ' ').replace(/[０-９]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xfee0));

function fullWidthChar(line: number, text: string, key: string, value: string): YamlSlip {
  return {
    kind: 'full_width_char',
    line,
    text,
    fixed: `${halfWidth(key).trim()}: ${halfWidth(value).trim()}`.trimEnd(),
  };
}

/**
 * A well-formed file whose values the directory refuses: the first of the refused lines (1-based) whose key or
 * unquoted value holds an ideographic space or full-width digits (`level: ６`, `level: 6　`, `level　: 6`), which
 * look right on screen. Null when none does: the problem is then said as it is.
 */
export function findFullWidthSlip(text: string, refusedLines: number[]): YamlSlip | null {
  const lines = text.split(/\r?\n/);
  for (const line of refusedLines) {
    const raw = lines[line - 1] ?? '';
    const m = KEY.exec(raw);
    if (!m || m[3] !== ':') continue;
    const [, before, key, , rest] = m as unknown as [string, string, string, string, string];
    const value = rest.replace(/[ \t]+#.*$/, '');
    const shown = value.replace(/^[ \u3000]+/, '');
    if (/^["']/.test(shown)) continue;
    // The line as typed: a trailing ideographic space is kept (trimEnd would take it away).
    if (/[\u3000０-９]/.test(key + value))
      return fullWidthChar(line, raw.slice(before.length).replace(/[ \t]+$/, ''), key, shown);
  }
  return null;
}

/** The error line's indentation against the nearest line above it at the same level of the file. */
function indentSlip(lines: string[], errorLine: number): YamlSlip | null {
  const at = lines[errorLine - 1];
  if (at === undefined || at.trim() === '') return null;
  const indent = /^ */.exec(at)![0].length;
  for (let i = errorLine - 2; i >= 0; i--) {
    const above = lines[i]!;
    if (above.trim() === '' || above.trimStart().startsWith('#')) continue;
    const expected = /^ *(?:- )?/.exec(above)![0].length;
    // A key right under `- id: …` lines up with `id`; elsewhere with the key above it.
    if (expected === indent) return null;
    if (/:\s*$/.test(above)) return null; // the line above opens a block: any deeper indent is fine there
    return { kind: 'indent', line: errorLine, indent, expected };
  }
  return null;
}

/** The slip in English, for `npm run org:import` and logs (ends with `(line N)` like every directory problem). */
export function describeYamlSlip(s: YamlSlip): string {
  switch (s.kind) {
    case 'full_width_colon':
      return (
        `"${s.text}" has a full-width colon "："; write it as "${s.fixed}" (a half-width colon and a space) ` +
        `(line ${s.line})`
      );
    case 'full_width_space':
      return `the indentation has a full-width space (U+3000); indent with half-width spaces (line ${s.line})`;
    case 'full_width_char':
      return (
        `"${s.text}" has full-width characters (an ideographic space or full-width digits); write it as ` +
        `"${s.fixed}" (line ${s.line})`
      );
    case 'tab':
      return `the indentation has a tab, which YAML does not allow; indent with spaces (line ${s.line})`;
    case 'no_space':
      return `"${s.text}" needs a space after the colon: "${s.fixed}" (line ${s.line})`;
    case 'indent':
      return (
        `this line is indented by ${s.indent} spaces and the key above it by ${s.expected}; keys of one entry ` +
        `must start in the same column (line ${s.line})`
      );
  }
}
