import fs from 'node:fs';
import path from 'node:path';
import { directoryFailure } from '../../src/app/startup-checks';
import { DirectoryImportError } from '../../src/org/import-directory';
import { parseDirectory } from '../../src/org/parse-directory';

const sample = fs.readFileSync(path.resolve(__dirname, '..', '..', 'config', 'org.sample.yaml'), 'utf8');
const lines = sample.split('\n');
/** The first member's `level: 6`, as a person editing the file types it. */
const at = lines.indexOf('    level: 6');
const typed = (line: string) => lines.map((l, i) => (i === at ? line : l)).join('\n');
/** What `npm start` says about the file, in Japanese and in English. */
const said = (text: string) => {
  const r = parseDirectory(text, 'org.yaml');
  if (r.ok) throw new Error('expected an error');
  const err = new DirectoryImportError(r.errors, 'org.yaml', r.slip);
  return { errors: r.errors, ja: directoryFailure(err, 'ja').message, en: directoryFailure(err, 'en').message };
};

/**
 * Issue 41: the commonest slips in a hand-edited directory file — the IME left on for a colon or a space, a tab,
 * a key out of line — are said as one sentence with the line and what to type, not 7–10 parser lines.
 */
describe('YAML slips in the directory file', () => {
  const line = at + 1;

  it('a full-width colon 「level：6」 (the IME left on)', () => {
    const s = said(typed('    level：6'));
    expect(s.errors).toEqual([
      `YAML: "level：6" has a full-width colon "："; write it as "level: 6" (a half-width colon and a space) ` +
        `(line ${line})`,
    ]);
    expect(s.ja).toBe(
      `組織ディレクトリ org.yaml の${line}行目「level：6」のコロンが全角「：」のため Hisho を起動できません` +
        '（半角のコロンと空白で「level: 6」と書き直してください）。',
    );
    expect(s.en).toBe(
      `Hisho could not start: the organisation directory org.yaml has a typing slip on line ${line}: "level：6" has a ` +
        'full-width colon "："; write it as "level: 6" (a half-width colon and a space).',
    );
    expect(said(typed('    level： 6')).ja).toContain('「level: 6」と書き直して');
  });

  it('a tab, a full-width space, no space after the colon', () => {
    expect(said(typed('\tlevel: 6')).ja).toBe(
      `組織ディレクトリ org.yaml の${line}行目の字下げにタブが入っているため Hisho を起動できません` +
        '（YAML ではタブが使えないので、半角スペースに置き換えてください）。',
    );
    expect(said(typed('  \t  level: 6')).errors[0]).toMatch(new RegExp(`has a tab.*\\(line ${line}\\)$`));
    expect(said(typed('\u3000\u3000level: 6')).ja).toContain(`${line}行目の字下げに全角スペースが入っている`);
    expect(said(typed('    level:6')).ja).toContain(`${line}行目「level:6」のコロンの後に空白がない`);
  });

  it('a key out of line with the keys above it', () => {
    for (const [indent, typedLine] of [
      [5, '     level: 6'],
      [3, '   level: 6'],
    ] as const) {
      const s = said(typed(typedLine));
      expect(s.ja).toBe(
        `組織ディレクトリ org.yaml の${line}行目の字下げ（空白${indent}個）が上の行（4個）とそろっていないため ` +
          'Hisho を起動できません（同じ項目のキーは同じ位置から書き始めてください）。',
      );
      expect(s.errors).toHaveLength(1);
    }
  });

  it('a key indented deeper than the `name: 山田一郎` line above it (the parser blamed the line above, in English)', () => {
    const reading = lines.indexOf('    reading: やまだ いちろう');
    const s = said(lines.map((l, i) => (i === reading ? `  ${l}` : l)).join('\n'));
    expect(s.ja).toBe(
      `組織ディレクトリ org.yaml の${reading + 1}行目の字下げ（空白6個）が上の行（4個）とそろっていないため ` +
        'Hisho を起動できません（同じ項目のキーは同じ位置から書き始めてください）。',
    );
    expect(s.errors).toHaveLength(1);
    // A long value continued on a deeper line is still a value.
    const continued = sample.replace('    title: 代表取締役社長', '    title: 代表取締役\n      社長');
    expect(parseDirectory(continued, 'org.yaml').ok).toBe(true);
  });

  it('a full-width space or digit in a key or value that looks right on screen (「level: ６」, 「level: 6　」)', () => {
    // Before: 「members[0].level: must be a whole number between 1 and 6」 in English, about a line showing 6.
    for (const typedLine of ['    level: ６', '    level: 6\u3000', '    level:\u30006', '    level\u3000: 6']) {
      const s = said(typed(typedLine));
      expect(s.ja).toBe(
        `組織ディレクトリ org.yaml の${line}行目「${typedLine.replace(/^ +/, '')}」に全角の空白か数字が入っているため ` +
          'Hisho を起動できません（半角で「level: 6」と書き直してください）。',
      );
      expect(s.errors).toHaveLength(1);
      expect(s.en).toContain(`on line ${line}: "${typedLine.replace(/^ +/, '')}" has full-width characters`);
    }
    // Names may hold a full-width space, and a refused value without one is said as it is, in Japanese.
    expect(parseDirectory(sample.replace('    name: 山田一郎', '    name: 山田\u3000一郎'), 'org.yaml').ok).toBe(true);
    expect(said(typed('    level: 7')).ja).toContain('（members[0].level は 1〜6 の数字にしてください）');
  });

  it('other problems in Japanese too: a missing or misspelt key', () => {
    const r = parseDirectory(typed('    levl: 6'), 'org.yaml');
    if (r.ok) throw new Error('expected an error');
    const ja = directoryFailure(new DirectoryImportError(r.errors, 'org.yaml'), 'ja').message;
    expect(ja).toMatch(
      /^Hisho を起動できません: 組織ディレクトリ org\.yaml の\d+行目の誤り（members\[0\]\.level がありません、/,
    );
    expect(ja).toContain('ほか1件は npm run org:import -- org.yaml で確認できます');
  });

  it('leaves other syntax errors to the parser, and colons inside values alone', () => {
    const r = said('organization:\n  id: acme\n  name: [unclosed\n');
    expect(r.errors[0]).toMatch(/^YAML syntax error: /);
    // Times, URLs and full-width colons in values are content, not slips.
    const ok = parseDirectory(
      sample
        .replace('    title: 代表取締役社長', '    title: "代表：社長"')
        .replace('quiet_hours: "21:00-08:00"', 'quiet_hours: 21:00-08:00'),
      'org.yaml',
    );
    expect(ok.ok).toBe(true);
  });
});
