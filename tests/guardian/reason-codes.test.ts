import { DEFAULT_CONFIDENTIAL_WORDS, REASON_CODES, defaultGuardianConfig, severityOf } from '../../src/guardian';
import { CLAIM_CASES, REPLY_CASES, SCENARIOS } from './scenarios';

describe('reason codes (R-G1)', () => {
  it('every reason code is exercised by the decision tables', () => {
    const claimCodes = CLAIM_CASES.map((c) => (c[2].length > 0 ? 'G_REPLY_UNSUPPORTED_CLAIM' : 'G_REPLY_OK'));
    const covered = new Set([...SCENARIOS.map((s) => s.code), ...REPLY_CASES.map((c) => c[3]), ...claimCodes]);
    expect(Object.keys(REASON_CODES).filter((c) => !covered.has(c))).toEqual([]);
    expect([...covered].filter((c) => !(c in REASON_CODES))).toEqual([]);
  });

  it.each(SCENARIOS.map((s) => [s.name, s.code, s.action] as const))(
    '%s uses %s with its declared action',
    (_, code, action) => {
      expect(REASON_CODES[code as keyof typeof REASON_CODES].action).toBe(action);
    },
  );

  it('every code has a description', () => {
    for (const info of Object.values(REASON_CODES)) expect(info.description.length).toBeGreaterThan(10);
  });

  it('severity order: BLOCK > CONFIRM double > CONFIRM single > MODIFY > PASS', () => {
    const order = [
      severityOf('BLOCK'),
      severityOf('CONFIRM', 'double'),
      severityOf('CONFIRM', 'single'),
      severityOf('MODIFY'),
      severityOf('PASS'),
    ];
    expect(order).toEqual([...order].sort((a, b) => b - a));
    expect(new Set(order).size).toBe(order.length);
  });

  it('defaults: standard mode, the SPEC confidential words, fresh copies', () => {
    const a = defaultGuardianConfig();
    expect(a).toMatchObject({ approvalMode: 'standard', autoApprove: [], shadowRules: [] });
    expect(a.confidentialWords).toEqual(
      expect.arrayContaining(['給与', '年収', '評価', '査定', 'M&A', '買収', '人事評価', '賞与', '解雇']),
    );
    a.confidentialWords.push('x');
    expect(defaultGuardianConfig().confidentialWords).toEqual([...DEFAULT_CONFIDENTIAL_WORDS]);
  });
});
