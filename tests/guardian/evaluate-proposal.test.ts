import { evaluateProposal, type GuardianVerdict } from '../../src/guardian';
import { SENDER, evaluate, makeInput, members, policy } from './fixtures';
import { SCENARIOS } from './scenarios';

describe('evaluateProposal: decision table', () => {
  it.each(SCENARIOS.map((s) => [s.name, s] as const))('%s', (_, s) => {
    const v = evaluate(s.input);
    expect({ action: v.action, code: v.reasonCode }).toEqual({ action: s.action, code: s.code });
    if (s.confirmationType) expect(v.confirmationType).toBe(s.confirmationType);
    if (v.action === 'CONFIRM') expect(v.confirmationType).toMatch(/^(single|double)$/);
    else expect(v.confirmationType).toBeUndefined();
    if (s.note) expect(v.userNoteJa).toContain(s.note);
    expect(v.reason.length).toBeGreaterThan(0);
    expect(v.trace.length).toBeGreaterThan(0);
  });
});

describe('evaluateProposal: priority order (first BLOCK/CONFIRM wins)', () => {
  it.each([
    ['unknown tool beats missing reasoning', { tool: null, reasoning: null }, 'G_UNKNOWN_TOOL'],
    ['constitution beats confidential', { reasoning: null, params: { body: '給与' } }, 'G_CONSTITUTION_NO_REASONING'],
    [
      'confidential word beats low confidence',
      { params: { body: '年収の一覧' }, confidence: { overall: 0.1 } },
      'G_CONFIDENTIAL',
    ],
    [
      'NG pattern beats critical risk',
      { params: { body: 'password=abcd1234' }, tool: { risk: 'critical' as const } },
      'G_NG_PATTERN',
    ],
    [
      'critical risk beats policy block',
      { tool: { risk: 'critical' as const }, policies: [policy('p1', 'block')] },
      'G_DANGEROUS_CRITICAL',
    ],
    [
      'high-risk CONFIRM is decided before a policy',
      { tool: { risk: 'high' as const }, policies: [policy('p1', 'block')] },
      'G_DANGEROUS_HIGH',
    ],
    [
      'policy beats very low confidence',
      { policies: [policy('p1', 'confirm')], confidence: { overall: 0.1 } },
      'G_POLICY_CONFIRM',
    ],
    [
      'policy block beats policy confirm in the same tier',
      { policies: [policy('p1', 'confirm'), policy('p2', 'block')] },
      'G_POLICY_BLOCK',
    ],
    [
      'low confidence beats a huge amount',
      { confidence: { overall: 0.4 }, params: { amount: 9_000_000 } },
      'G_CONFIDENCE_LOW',
    ],
    [
      'double beats single in a tier (all vs amount)',
      { params: { amount: 200_000, assignees: 'all' } },
      'G_RECIPIENTS_ALL',
    ],
    [
      'double beats single in a tier (amount vs many)',
      { params: { amount: 2_000_000, assignees: members(3) } },
      'G_AMOUNT_VERY_HIGH',
    ],
    ['parameters beat a past date', { params: { assignees: members(3), due: '2026-01-01' } }, 'G_RECIPIENTS_MANY'],
    [
      'past date beats strict mode',
      { params: { due: '2026-01-01' }, config: { approvalMode: 'strict' as const } },
      'G_DATE_PAST',
    ],
  ])('%s', (_, input, code) => {
    expect(evaluate(input).reasonCode).toBe(code);
  });

  it('stops evaluating after the deciding tier', () => {
    const v = evaluate({ tool: { risk: 'critical' }, confidence: { overall: 0.1 } });
    expect(v.trace.map((t) => t.priority)).not.toContain(5);
    expect(v.trace.find((t) => t.rule === 'dangerous.risk')).toMatchObject({
      outcome: 'BLOCK',
      reasonCode: 'G_DANGEROUS_CRITICAL',
      enforced: true,
    });
  });

  it('traces every rule with PASS when everything passes', () => {
    const v = evaluate({});
    expect(v.trace.every((t) => t.outcome === 'PASS' && t.enforced)).toBe(true);
    expect(v.trace.map((t) => t.rule)).toEqual(
      expect.arrayContaining([
        'tool.unknown',
        'constitution.permission_claim',
        'security.confidential',
        'dangerous.risk',
        'confidence',
        'param.amount',
        'consistency.fix',
        'approval.strict',
      ]),
    );
    const priorities = v.trace.map((t) => t.priority);
    expect(priorities).toEqual([...priorities].sort((a, b) => a - b));
  });
});

describe('evaluateProposal: shadow rules', () => {
  it('a shadow rule by name is traced but not enforced', () => {
    const v = evaluate({ params: { assignees: members(5) }, config: { shadowRules: ['param.recipients'] } });
    expect(v.reasonCode).toBe('G_OK');
    expect(v.trace).toContainEqual({
      rule: 'param.recipients',
      priority: 6,
      outcome: 'CONFIRM',
      reasonCode: 'G_RECIPIENTS_MANY',
      enforced: false,
    });
  });

  it('a shadow rule by reason code only silences that code', () => {
    const cfg = { shadowRules: ['G_CONFIDENCE_MEDIUM'] };
    expect(evaluate({ confidence: { overall: 0.6 }, config: cfg }).reasonCode).toBe('G_OK');
    expect(evaluate({ confidence: { overall: 0.4 }, config: cfg }).reasonCode).toBe('G_CONFIDENCE_LOW');
  });

  it('a policy marked shadow is evaluated but not enforced', () => {
    const v = evaluate({ policies: [policy('p-new', 'block', ['*'], { shadow: true })] });
    expect(v.reasonCode).toBe('G_OK');
    expect(v.trace).toContainEqual({
      rule: 'policy:p-new',
      priority: 4,
      outcome: 'BLOCK',
      reasonCode: 'G_POLICY_BLOCK',
      enforced: false,
    });
  });

  it('a policy can be shadowed through config by its rule name', () => {
    const v = evaluate({ policies: [policy('p1', 'confirm')], config: { shadowRules: ['policy:p1'] } });
    expect(v.reasonCode).toBe('G_OK');
  });

  it('tool existence cannot be shadowed', () => {
    const v = evaluate({ tool: null, config: { shadowRules: ['tool.unknown', 'G_UNKNOWN_TOOL'] } });
    expect(v.reasonCode).toBe('G_UNKNOWN_TOOL');
    expect(v.trace[0]).toMatchObject({ enforced: true });
  });

  it('shadowing the fix rule leaves the parameters as proposed (and checks them raw)', () => {
    const v = evaluate({
      params: { assignees: ['自分', 'm-1', SENDER], body: ' x ' },
      config: { shadowRules: ['consistency.fix'] },
    });
    expect(v.reasonCode).toBe('G_RECIPIENTS_MANY');
    expect(v.modifiedParameters).toBeUndefined();
  });
});

describe('evaluateProposal: MODIFY outputs', () => {
  it.each([
    ['trims strings at any depth', { body: '  資料  ', meta: { note: ' a ' } }, { body: '資料', meta: { note: 'a' } }],
    ['自分 → sender (person)', { person: '自分' }, { person: SENDER }],
    ['me → sender (target_user)', { target: ' me ' }, { target: SENDER }],
    ['俺 in recipients → sender', { assignees: ['俺', 'm-1'] }, { assignees: [SENDER, 'm-1'] }],
    ['明日 → ISO date', { due: '明日' }, { due: '2026-11-23' }],
    ['明日15時 → ISO date-time with offset', { due: '明日15時' }, { due: '2026-11-23T15:00:00+09:00' }],
    ['来週金曜までに → ISO date', { due: '来週金曜までに' }, { due: '2026-11-27' }],
  ])('%s', (_, params, expected) => {
    const v = evaluate({ params });
    expect(v.action).toBe('MODIFY');
    expect(v.reasonCode).toBe('G_PARAM_FIXED');
    expect(v.modifiedParameters).toEqual(expected);
  });

  it('fixes are applied before the parameter checks (自分 + the sender = 1 person)', () => {
    const v = evaluate({ params: { assignees: ['自分', SENDER, 'm-1'] } });
    expect(v.action).toBe('MODIFY');
    expect(v.modifiedParameters).toEqual({ assignees: [SENDER, SENDER, 'm-1'] });
  });

  it('a CONFIRM carries the normalised parameters so the confirmed call uses them', () => {
    const v = evaluate({ params: { due: '明日', amount: 300_000 } });
    expect(v.reasonCode).toBe('G_AMOUNT_HIGH');
    expect(v.modifiedParameters).toEqual({ due: '2026-11-23', amount: 300_000 });
  });

  it('strict mode turns a MODIFY into a CONFIRM with the normalised parameters', () => {
    const v = evaluate({ params: { due: '明日' }, config: { approvalMode: 'strict' } });
    expect(v.reasonCode).toBe('G_STRICT_MODE_CONFIRM');
    expect(v.modifiedParameters).toEqual({ due: '2026-11-23' });
  });

  it('a BLOCK never carries parameters', () => {
    expect(evaluate({ params: { due: '明日' }, tool: { risk: 'critical' } }).modifiedParameters).toBeUndefined();
  });
});

describe('evaluateProposal: purity', () => {
  it('is deterministic and does not mutate its input', () => {
    const input = makeInput({ params: { due: '明日', assignees: ['自分', ' m-1 '] } });
    const before = JSON.stringify(input);
    const a = evaluateProposal(input);
    const b = evaluateProposal(input);
    expect(a).toEqual(b);
    expect(JSON.stringify(input)).toBe(before);
  });

  it('policy confirm carries the policy id', () => {
    const v = evaluate({ policies: [policy('p-expense', 'confirm')] });
    expect(v).toMatchObject({
      action: 'CONFIRM',
      policyId: 'p-expense',
      userNoteJa: '社内ルール「経費は部長承認」に関わる操作です',
    });
  });

  it('non-object parameters are unfixable (fail-closed)', () => {
    const input = makeInput();
    input.proposal.parameters = null as unknown as Record<string, unknown>;
    expect(evaluateProposal(input).reasonCode).toBe('G_PARAM_UNFIXABLE');
  });
});

describe('evaluateProposal: dates on the business calendar', () => {
  const THURSDAY = new Date('2026-11-19T10:00:00+09:00'); // Monday 11/23 is 勤労感謝の日

  it('N営業日後 and 翌営業日 become dates on the business calendar', () => {
    const v = evaluate({ params: { due: '3営業日後' }, context: { now: THURSDAY } });
    expect(v.action).toBe('MODIFY');
    expect(v.modifiedParameters).toEqual({ due: '2026-11-25' });
    expect(evaluate({ params: { due: '翌営業日の10時' } }).modifiedParameters).toEqual({
      due: '2026-11-24T10:00:00+09:00',
    });
  });

  it('a date on a holiday stays as asked, and a confirmation says it is a holiday', () => {
    const v = evaluate({ params: { due: '明日', amount: 300_000 } });
    expect(v.reasonCode).toBe('G_AMOUNT_HIGH');
    expect(v.modifiedParameters).toEqual({ due: '2026-11-23', amount: 300_000 });
    expect(v.userNoteJa).toBe('300,000円の操作です／11/23（月）は勤労感謝の日です');
    // Nothing to confirm: the date is fixed without a question.
    expect(evaluate({ params: { due: '明日' } })).toMatchObject({
      action: 'MODIFY',
      modifiedParameters: { due: '2026-11-23' },
    });
    expect(evaluate({ params: { due: '明日' } }).userNoteJa).toBeUndefined();
  });

  it('a weekend and an organisation closing day are named too; a business day is not', () => {
    const closing = { closingDays: [{ name: '年末年始休業', from: '12-29', to: '01-03' }] };
    const sat = evaluate({ params: { due: '2026-11-28', amount: 300_000 } });
    expect(sat.userNoteJa).toBe('300,000円の操作です／11/28は土曜日です');
    const yearEnd = evaluate({
      params: { due: '12/30', amount: 300_000 },
      context: { now: new Date('2026-12-25T10:00:00+09:00'), calendar: closing },
    });
    expect(yearEnd.modifiedParameters).toEqual({ due: '2026-12-30', amount: 300_000 });
    expect(yearEnd.userNoteJa).toBe('300,000円の操作です／12/30（水）は年末年始休業です');
    const firstDay = evaluate({
      params: { due: '年明け最初の営業日', amount: 300_000 },
      context: { now: new Date('2026-12-25T10:00:00+09:00'), calendar: closing },
    });
    expect(firstDay.modifiedParameters).toEqual({ due: '2027-01-04', amount: 300_000 });
    expect(firstDay.userNoteJa).toBe('300,000円の操作です');
  });
});

describe('GuardianVerdict: each action carries only its own fields', () => {
  it('every scenario verdict has exactly the fields of its action', () => {
    for (const s of SCENARIOS) {
      const v = evaluate(s.input);
      const fields = Object.keys(v).filter((k) => !['action', 'reasonCode', 'reason', 'trace'].includes(k));
      const allowed: Record<string, string[]> = {
        ALLOW: [],
        MODIFY: ['modifiedParameters'],
        CONFIRM: ['confirmationType', 'userNoteJa', 'modifiedParameters', 'policyId'],
        BLOCK: ['userNoteJa', 'policyId'],
      };
      expect({ name: s.name, extra: fields.filter((f) => !allowed[v.action]!.includes(f)) }).toEqual({
        name: s.name,
        extra: [],
      });
      if (v.action === 'CONFIRM') expect(v.userNoteJa.length).toBeGreaterThan(0);
      if (v.policyId !== undefined) expect(v.reasonCode).toMatch(/^G_POLICY_/);
    }
  });

  it('impossible combinations do not type-check', () => {
    const trace: GuardianVerdict['trace'] = [];
    const ok: GuardianVerdict[] = [
      { action: 'ALLOW', reasonCode: 'G_OK', reason: 'r', trace },
      { action: 'BLOCK', reasonCode: 'G_POLICY_BLOCK', policyId: 'p', reason: 'r', userNoteJa: 'n', trace },
    ];
    const wrong: GuardianVerdict[] = [
      // @ts-expect-error an ALLOW carries no parameters
      { action: 'ALLOW', reasonCode: 'G_OK', reason: 'r', trace, modifiedParameters: {} },
      // @ts-expect-error a CONFIRM code cannot come with a BLOCK
      { action: 'BLOCK', reasonCode: 'G_DELETE', reason: 'r', userNoteJa: 'n', trace },
      // @ts-expect-error a CONFIRM says how many times to ask
      { action: 'CONFIRM', reasonCode: 'G_DELETE', reason: 'r', userNoteJa: 'n', trace },
      // @ts-expect-error a policy only comes with a G_POLICY_* code
      { action: 'BLOCK', reasonCode: 'G_NG_PATTERN', policyId: 'p', reason: 'r', userNoteJa: 'n', trace },
      // @ts-expect-error a MODIFY always carries its parameters
      { action: 'MODIFY', reasonCode: 'G_PARAM_FIXED', reason: 'r', trace },
    ];
    expect(ok.length + wrong.length).toBe(7);
  });
});
