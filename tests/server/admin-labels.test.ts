import fs from 'node:fs';
import path from 'node:path';
import { ERROR_CODES } from '../../src/core/app-error';
import { REASON_CODES, RULE_LABELS, ruleLabel } from '../../src/guardian';
import { DECISION_LABELS } from '../../src/turn/turn-decision';
import { handlers } from '../../handlers';
import {
  DECISION_TEXT,
  REASON_GROUPS,
  REASON_INFO,
  TOOL_LABELS,
  reasonInfo,
  reasonOptions,
} from '../../src/server/admin/labels';

/** What an operator must never read: codes, dotted identifiers, spec references. */
const RAW = /[A-Z]_[A-Z_]+|[a-z]+\.[a-z_]+|\(R-[A-Z]\d|seed \d|§/;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'generated' ? [] : sourceFiles(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

describe('the reason-code table of operator screens', () => {
  const root = path.resolve(__dirname, '..', '..');

  it('has every Guardian and error code', () => {
    for (const code of [...Object.keys(REASON_CODES), ...Object.keys(ERROR_CODES)])
      expect([code, code in REASON_INFO]).toEqual([code, true]);
  });

  it('has every reason code the code base writes (a new code without words fails here)', () => {
    const written = new Set<string>();
    for (const f of [...sourceFiles(path.join(root, 'src')), ...sourceFiles(path.join(root, 'handlers'))]) {
      const text = fs.readFileSync(f, 'utf8');
      for (const m of text.matchAll(/'((?:[GZSBTOPW]|BUDGET_SENDER)_[A-Z][A-Z_]*)'/g)) written.add(m[1]!);
    }
    // 'G_CONSTITUTION' is a LIKE prefix in the constitution audit, not a code.
    written.delete('G_CONSTITUTION');
    expect(written.size).toBeGreaterThan(60);
    const missing = [...written].filter((code) => !(code in REASON_INFO));
    expect(missing).toEqual([]);
  });

  it('says each code in Japanese, with an explanation and a next step, without raw identifiers', () => {
    for (const [code, info] of Object.entries(REASON_INFO)) {
      for (const text of [info.label, info.explain, info.next]) {
        expect([code, text.length > 0]).toEqual([code, true]);
        expect([code, RAW.test(text)]).toEqual([code, false]);
        expect([code, /[ぁ-んァ-ヶ一-龠]/.test(text)]).toEqual([code, true]);
      }
    }
    expect(reasonInfo('G_CONFIDENCE_MEDIUM')!.label).toBe('確信度が中程度');
    expect(reasonInfo('Z_OUT_OF_SCOPE_USER')!.next).toContain('上長');
    // An unknown code is still words, never the code itself.
    expect(reasonInfo('X_SOMETHING_NEW')!.label).toBe('その他');
  });

  it('labels every decision a turn can record, and its shadow form where one exists', () => {
    for (const d of Object.values(DECISION_LABELS)) expect([d, DECISION_TEXT[d]]).toEqual([d, expect.any(String)]);
    for (const t of Object.values(DECISION_TEXT)) expect(RAW.test(t)).toBe(false);
  });

  it('labels every Guardian rule where it is declared, in Japanese', () => {
    expect(Object.keys(RULE_LABELS).length).toBeGreaterThanOrEqual(19);
    for (const [name, label] of Object.entries(RULE_LABELS)) {
      expect([name, RAW.test(label)]).toEqual([name, false]);
      expect([name, /[ぁ-んァ-ヶ一-龠]/.test(label)]).toEqual([name, true]);
    }
    expect(ruleLabel('dangerous.risk')).toBe('操作の危険度');
    expect(ruleLabel('policy:expense-approval')).toBe('社内ルール');
  });

  it('groups every reason by what happened, each once, in Japanese order within a group', () => {
    const grouped = REASON_GROUPS.flatMap((g) => g.codes);
    expect(grouped.filter((c, i) => grouped.indexOf(c) !== i)).toEqual([]);
    expect(Object.keys(REASON_INFO).filter((c) => !grouped.includes(c as never))).toEqual([]);
    for (const g of REASON_GROUPS) expect(RAW.test(g.label)).toBe(false);
    const options = reasonOptions();
    expect(options.map((g) => g.label)).toEqual(REASON_GROUPS.map((g) => g.label));
    const denied = options.find((g) => g.label === '権限で断った')!.reasons.map((r) => r.label);
    expect(denied).toEqual([...denied].sort(new Intl.Collator('ja').compare));
    expect(denied).toContain('権限レベル不足');
  });

  it('names every tool in words (the policies page shows the tools of a rule)', () => {
    for (const t of handlers)
      expect([t.name, TOOL_LABELS[t.name]]).toEqual([t.name, expect.stringMatching(/[ぁ-んァ-ヶ一-龠]/)]);
    expect(Object.keys(TOOL_LABELS).filter((name) => !handlers.some((t) => t.name === name))).toEqual([]);
  });
});
