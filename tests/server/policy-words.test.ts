import { ruleInWords } from '../../src/server/admin/directory-views';

/** How /admin states a policy's machine rule (the sample's own salary policy has none since issue 40). */
describe('a policy rule in words', () => {
  it('names the operations, the words and the action', () => {
    expect(ruleInWords({ tools: ['*'], action: 'block', keywords: ['給与', '年収', '査定'] })).toBe(
      'すべての操作で「給与」「年収」「査定」を含むものは禁止',
    );
    expect(ruleInWords(null)).toBe('なし（AIへの指示として伝えるだけで、自動では止めません）');
  });
});
