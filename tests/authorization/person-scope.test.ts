import fs from 'node:fs';
import path from 'node:path';
import {
  authorize,
  hiddenTopSecret,
  matchMembers,
  personScopeMarkdown,
  visibleDepartments,
  type AuthDecision,
  type Directory,
  type PersonRole,
} from '../../src/authorization';
import type { ToolMeta } from '../../src/core/tool-meta';
import { actorAt, directory as base, proposal } from './fixtures';

/** The fixture organisation plus a top-secret department (M&A lab) under hq, and some tasks. */
const directory: Directory = {
  departments: [
    ...base.departments,
    { id: 'ma-lab', parentId: 'hq', topSecret: true },
    { id: 'ma-lab-team', parentId: 'ma-lab' },
  ],
  members: [...base.members, { id: 'm-secret', departmentId: 'ma-lab-team', name: '秘密 五郎' }],
  tasks: new Map([
    ['t-own', { assigneeMemberId: 'm-actor', createdByMemberId: 'm-ceo' }],
    ['t-created', { assigneeMemberId: 'm-other', createdByMemberId: 'm-actor' }],
    ['t-in', { assigneeMemberId: 'm-own', createdByMemberId: 'm-child' }],
    ['t-out', { assigneeMemberId: 'm-other', createdByMemberId: 'm-own' }],
    ['t-secret', { assigneeMemberId: 'm-secret', createdByMemberId: 'm-ceo' }],
    ['t-given', { assigneeMemberId: 'm-own', createdByMemberId: 'm-actor' }],
  ]),
};

/** A tool with one parameter `p` of the given person role. */
const toolWith = (role: PersonRole, over: Partial<ToolMeta> = {}): ToolMeta => ({
  name: 'probe',
  effects: ['db.x'],
  risk: 'none',
  requiredLevel: 1,
  requiresConfirmation: false,
  enabled: true,
  paramRoles: { p: role },
  ...over,
});

const decide = (role: PersonRole, value: unknown, level: number): AuthDecision =>
  authorize({ actor: actorAt(level), tool: toolWith(role), proposal: proposal({ p: value }, 'probe'), directory });

const short = (d: AuthDecision): string =>
  d.result === 'DENIED' ? `DENIED ${d.reasonCode}` : d.result === 'CONFIRM' ? `CONFIRM ${d.reasonCode}` : 'ALLOWED';

/** One person per relation, as the sender (level 2, department sales) sees them. */
const PEOPLE = {
  self: 'm-actor',
  in_scope: 'm-own',
  out_of_scope: 'm-other',
  top_secret: 'm-secret',
  unknown: 'm-ghost',
} as const;
const TASKS = {
  self: 't-own',
  in_scope: 't-in',
  out_of_scope: 't-out',
  top_secret: 't-secret',
  unknown: 't-ghost',
} as const;

const A = 'ALLOWED';
const OUT = 'DENIED Z_OUT_OF_SCOPE_USER';
const SECRET = 'DENIED Z_TOP_SECRET';
const UNKNOWN = 'DENIED Z_UNKNOWN_TARGET';

describe('the person-scope table, row by row (a level-2 member of sales)', () => {
  // Written out literally (not read from the table), so a changed table cell fails here.
  const expected: Record<PersonRole, [string, string, string, string, string]> = {
    target_user: [A, A, OUT, SECRET, UNKNOWN],
    assignee: [A, A, OUT, SECRET, UNKNOWN],
    reminder_target: [A, A, OUT, SECRET, UNKNOWN],
    memory_subject: [A, 'CONFIRM Z_CONFIRM_PERSON', OUT, SECRET, UNKNOWN],
    task: [A, 'DENIED Z_LEVEL_TOO_LOW', OUT, SECRET, UNKNOWN],
    task_change: [A, 'CONFIRM Z_CONFIRM_PERSON', OUT, SECRET, UNKNOWN],
    recipients: [A, A, 'CONFIRM Z_CONFIRM_PERSON', SECRET, UNKNOWN],
    person: [A, A, OUT, SECRET, UNKNOWN],
  };
  const rows = Object.entries(expected).flatMap(([role, outcomes]) =>
    (['self', 'in_scope', 'out_of_scope', 'top_secret', 'unknown'] as const).map((relation, i) => ({
      role: role as PersonRole,
      relation,
      want: outcomes[i]!,
    })),
  );

  it.each(rows)('$role × $relation → $want', ({ role, relation, want }) => {
    const value =
      role === 'task' || role === 'task_change'
        ? TASKS[relation]
        : role === 'recipients'
          ? [PEOPLE[relation]]
          : PEOPLE[relation];
    expect(short(decide(role, value, 2))).toBe(want);
  });

  it("a task the sender created (assigned to someone outside the scope) is the sender's own", () => {
    expect(short(decide('task', 't-created', 1))).toBe(A);
  });

  it("a task the sender gave someone is that person's when it is changed: asked first, or denied out of scope", () => {
    expect(short(decide('task', 't-given', 2))).toBe(A);
    expect(short(decide('task_change', 't-given', 2))).toBe('CONFIRM Z_CONFIRM_PERSON');
    expect(short(decide('task_change', 't-created', 2))).toBe(OUT);
    expect(short(decide('task_change', 't-own', 1))).toBe(A);
  });

  it('a manager is asked before changing a task in scope, like anyone else', () => {
    expect(short(decide('task_change', 't-in', 3))).toBe('CONFIRM Z_CONFIRM_PERSON');
    expect(short(decide('task_change', 't-out', 5))).toBe('CONFIRM Z_CONFIRM_PERSON');
    expect(short(decide('task_change', 't-secret', 5))).toBe(SECRET);
  });

  it('from level 3 a task in scope may be completed; outside the scope still not', () => {
    expect(short(decide('task', 't-in', 3))).toBe(A);
    expect(short(decide('task', 't-out', 3))).toBe(OUT);
    expect(short(decide('task', 't-out', 4))).toBe(OUT);
    expect(short(decide('task', 't-out', 5))).toBe(A);
  });

  it('level 5 reaches the whole organisation except top secret; level 6 everything', () => {
    for (const role of ['target_user', 'assignee', 'reminder_target'] as const) {
      expect(short(decide(role, 'm-other', 5))).toBe(A);
      expect(short(decide(role, 'm-secret', 5))).toBe(SECRET);
      expect(short(decide(role, 'm-secret', 6))).toBe(A);
    }
    expect(short(decide('task', 't-secret', 5))).toBe(SECRET);
    expect(short(decide('task', 't-secret', 6))).toBe(A);
  });

  it('a member of the top-secret department sees their own department', () => {
    const insider = actorAt(2, { memberId: 'm-secret', departmentId: 'ma-lab-team' });
    const d = authorize({
      actor: insider,
      tool: toolWith('target_user'),
      proposal: proposal({ p: 'm-secret' }, 'probe'),
      directory,
    });
    expect(d.result).toBe('ALLOWED');
    expect(hiddenTopSecret(insider, directory.departments).has('ma-lab-team')).toBe(false);
  });

  it('a top-secret department is denied as a department target below level 6', () => {
    const t = toolWith('target_user', { paramRoles: { d: 'target_department' } });
    const ask = (level: number) =>
      authorize({ actor: actorAt(level), tool: t, proposal: proposal({ d: 'ma-lab' }, 'probe'), directory });
    expect(ask(5)).toMatchObject({ result: 'DENIED', reasonCode: 'Z_TOP_SECRET' });
    expect(ask(6).result).toBe('ALLOWED');
  });

  it('organisation-wide calls: level 3+ allowed, below asked first', () => {
    const t = toolWith('memory_subject', { organisationWide: (p) => p.kind === 'fact' && !p.p });
    const ask = (level: number, parameters: Record<string, unknown>) =>
      short(authorize({ actor: actorAt(level), tool: t, proposal: proposal(parameters, 'probe'), directory }));
    expect(ask(1, { kind: 'fact' })).toBe('CONFIRM Z_CONFIRM_ORG_WIDE');
    expect(ask(2, { kind: 'fact' })).toBe('CONFIRM Z_CONFIRM_ORG_WIDE');
    expect(ask(3, { kind: 'fact' })).toBe(A);
    expect(ask(1, { kind: 'preference' })).toBe(A);
  });

  it('a CONFIRM carries a note for the question in both languages', () => {
    const d = decide('memory_subject', 'm-own', 2);
    expect(d).toMatchObject({ result: 'CONFIRM', noteJa: expect.any(String), noteEn: expect.any(String) });
  });
});

describe('names resolve exactly as the handlers resolve them', () => {
  it('「田中部長」「田中課長さん」 are 田中 (the honorifics the handler strips are stripped here too)', () => {
    for (const ref of ['田中部長', '田中課長さん', 'Tanaka-san', 'ｔａｎａｋａ']) {
      expect(matchMembers(ref, directory.members).map((m) => m.id)).toEqual(['m-own']);
      expect(short(decide('assignee', ref, 2))).toBe(A);
    }
    expect(short(decide('assignee', '渡辺部長', 2))).toBe(OUT);
  });

  it('a given name finds the member by prefix/suffix as the handler does (「太郎」 → 田中 太郎)', () => {
    expect(matchMembers('太郎', directory.members).map((m) => m.id)).toEqual(['m-own']);
    expect(short(decide('assignee', '四郎', 2))).toBe(OUT);
  });

  it('「自分」 is the sender', () => {
    expect(short(decide('memory_subject', '自分', 1))).toBe(A);
  });

  it(
    'an ambiguous name is allowed when one candidate may be touched ' +
      '(the handler asks which), denied when none may',
    () => {
      const twins: Directory = {
        ...directory,
        members: [
          ...directory.members,
          { id: 'm-twin', departmentId: 'eng-backend', name: '田中 次郎', aliases: ['田中'] },
        ],
      };
      const ask = (ref: string) =>
        authorize({
          actor: actorAt(2),
          tool: toolWith('assignee'),
          proposal: proposal({ p: ref }, 'probe'),
          directory: twins,
        });
      expect(ask('田中').result).toBe('ALLOWED');
      const outsiders: Directory = {
        ...directory,
        members: [...directory.members, { id: 'm-twin2', departmentId: 'eng', name: '渡辺 五郎', aliases: ['渡辺'] }],
      };
      const d = authorize({
        actor: actorAt(2),
        tool: toolWith('assignee'),
        proposal: proposal({ p: '渡辺' }, 'probe'),
        directory: outsiders,
      });
      expect(d).toMatchObject({ result: 'DENIED', reasonCode: 'Z_OUT_OF_SCOPE_USER' });
    },
  );
});

describe('top secret in the scope computation', () => {
  it('levels below 6 never see a top-secret department or its sub-departments', () => {
    const v5 = visibleDepartments({ level: 5, departmentId: 'sales' }, directory.departments);
    expect(v5).not.toBe('ALL');
    expect([...(v5 as Set<string>)].filter((d) => d.startsWith('ma-'))).toEqual([]);
    expect((v5 as Set<string>).has('eng-backend')).toBe(true);
    expect(visibleDepartments({ level: 6, departmentId: 'hq' }, directory.departments)).toBe('ALL');
    const v4 = visibleDepartments({ level: 4, departmentId: 'hq' }, directory.departments) as Set<string>;
    expect(v4.has('ma-lab')).toBe(false);
    expect(v4.has('sales')).toBe(true);
  });
});

describe('README', () => {
  it('shows the same person-scope table as the code', () => {
    const readme = fs.readFileSync(path.resolve(__dirname, '..', '..', 'README.md'), 'utf8');
    expect(readme).toContain(personScopeMarkdown());
  });
});
