import { authorize, filterToolsForActor, requiredLevelOf, type AuthDecision } from '../../src/authorization';
import type { ToolMeta } from '../../src/core/tool-meta';
import { actorAt, directory, proposal, tool } from './fixtures';

const readTool = tool({ requiredLevel: 0 }); // scope table: the level check never interferes
const run = (
  level: number,
  parameters: Record<string, unknown>,
  t: ToolMeta | undefined = readTool,
  topSecret = false,
) => authorize({ actor: actorAt(level), tool: t, proposal: proposal(parameters), directory, topSecret });

function expectScopeDenial(d: AuthDecision, code: string): void {
  expect(d.result).toBe('DENIED');
  expect(d.reasonCode).toBe(code);
}

describe('authorize: level × scope table', () => {
  const cases = {
    own: { user: 'm-own', department: 'sales', minLevel: 1 },
    child: { user: 'm-child', department: 'sales-east', minLevel: 3 },
    grandchild: { user: 'm-grand', department: 'sales-east-tokyo', minLevel: 4 },
    sibling: { user: 'm-sibling', department: 'marketing', minLevel: 5 },
    'other branch': { user: 'm-other', department: 'eng-backend', minLevel: 5 },
    'whole org (root)': { user: 'm-ceo', department: 'hq', minLevel: 5 },
  } as const;
  const rows = [0, 1, 2, 3, 4, 5, 6].flatMap((level) =>
    Object.entries(cases).map(([name, c]) => ({ level, name, ...c, allowed: level >= c.minLevel })),
  );

  it.each(rows)('level $level, $name: target_user allowed=$allowed', ({ level, user, allowed }) => {
    const d = run(level, { user });
    if (level === 0) expect(d).toMatchObject({ result: 'DENIED', reasonCode: 'Z_PUBLIC_NO_EFFECTS' });
    else if (allowed) expect(d).toMatchObject({ result: 'ALLOWED', reasonCode: 'Z_OK' });
    else expectScopeDenial(d, 'Z_OUT_OF_SCOPE_USER');
  });

  it.each(rows)('level $level, $name: target_department allowed=$allowed', ({ level, department, allowed }) => {
    const d = run(level, { department });
    if (level === 0) expect(d).toMatchObject({ result: 'DENIED', reasonCode: 'Z_PUBLIC_NO_EFFECTS' });
    else if (allowed) expect(d).toMatchObject({ result: 'ALLOWED', reasonCode: 'Z_OK' });
    else expectScopeDenial(d, 'Z_OUT_OF_SCOPE_DEPARTMENT');
  });

  it('checks every id of an array and denies if one is out of scope', () => {
    expect(run(3, { user: ['m-own', 'm-child'] }).result).toBe('ALLOWED');
    expectScopeDenial(run(3, { user: ['m-own', 'm-grand'] }), 'Z_OUT_OF_SCOPE_USER');
    expectScopeDenial(run(3, { department: ['sales', 'marketing'] }), 'Z_OUT_OF_SCOPE_DEPARTMENT');
  });

  it('always lets actors see their own data, even without a department', () => {
    expect(run(1, { user: 'm-actor' }).result).toBe('ALLOWED');
    const d = authorize({
      actor: actorAt(1, { memberId: 'm-nodept', departmentId: null }),
      tool: readTool,
      proposal: proposal({ user: 'm-nodept' }),
      directory,
    });
    expect(d.result).toBe('ALLOWED');
  });

  it('members without a department are visible only from level 5', () => {
    expectScopeDenial(run(4, { user: 'm-nodept' }), 'Z_OUT_OF_SCOPE_USER');
    expect(run(5, { user: 'm-nodept' }).result).toBe('ALLOWED');
  });

  it('resolves names and aliases (with honorifics) before scope-checking', () => {
    expect(run(2, { user: '田中さん' }).result).toBe('ALLOWED');
    expectScopeDenial(run(2, { user: '伊藤 三郎' }), 'Z_OUT_OF_SCOPE_USER');
    expect(run(2, { user: { memberId: 'm-own' } }).result).toBe('ALLOWED');
  });

  it('checks conventional target names even when the tool declares no roles', () => {
    const bare = tool({ requiredLevel: 0, paramRoles: undefined });
    expectScopeDenial(run(2, { target_user_id: 'm-other' }, bare), 'Z_OUT_OF_SCOPE_USER');
    expectScopeDenial(run(2, { target_department_id: 'eng' }, bare), 'Z_OUT_OF_SCOPE_DEPARTMENT');
    expect(run(2, { target_user_id: 'm-own' }, bare).result).toBe('ALLOWED');
  });

  it('skips absent or null optional targets', () => {
    expect(run(1, { user: null, department: undefined }).result).toBe('ALLOWED');
  });
});

describe('authorize: unknown targets do not leak existence', () => {
  it.each([
    ['unknown member id', { user: 'm-ghost' }],
    ['unknown name', { user: '存在しない 人' }],
    ['unknown department', { department: 'secret-lab' }],
    ['unreadable value', { user: 42 }],
    ['empty string', { user: '' }],
  ])('%s → Z_UNKNOWN_TARGET', (_name, parameters) => {
    expectScopeDenial(run(6, parameters), 'Z_UNKNOWN_TARGET');
  });

  it('names no person (free text from the user) in its reason', () => {
    const outOfScope = run(2, { user: '渡辺 四郎' });
    const unknown = run(2, { user: '存在しない 人' });
    expect(outOfScope.reasonCode).toBe('Z_OUT_OF_SCOPE_USER');
    expect(unknown.reasonCode).toBe('Z_UNKNOWN_TARGET');
    for (const text of [outOfScope.reason, unknown.reason]) {
      expect(text).not.toContain('渡辺');
      expect(text).not.toContain('eng-backend');
    }
  });
});

describe('authorize: recipients and other person parameters are scope-checked too (issue 8)', () => {
  const assign = tool({ name: 'create_task', effects: ['db.task_create'], requiredLevel: 1, risk: 'medium' });
  const go = (parameters: Record<string, unknown>, level = 1) =>
    authorize({ actor: actorAt(level), tool: assign, proposal: proposal(parameters, 'create_task'), directory });

  it('mentions colleagues in scope, asks first for people outside it, and lets "all" to the Guardian', () => {
    expect(go({ to: ['m-own', '田中さん'] }).result).toBe('ALLOWED');
    expect(go({ to: ['m-other', 'm-ceo'] })).toMatchObject({ result: 'CONFIRM', reasonCode: 'Z_CONFIRM_PERSON' });
    expect(go({ to: 'all' }).result).toBe('ALLOWED');
    expect(go({ to: ['m-other'] }, 5).result).toBe('ALLOWED');
  });

  it('denies a generic person parameter outside the scope', () => {
    expectScopeDenial(go({ who: 'm-other' }), 'Z_OUT_OF_SCOPE_USER');
    expect(go({ who: 'm-own' }).result).toBe('ALLOWED');
  });

  it('denies recipients given as unknown member ids or names, with the same reply as out of scope', () => {
    expectScopeDenial(go({ to: ['m-own', 'm-ghost'] }), 'Z_UNKNOWN_TARGET');
    expectScopeDenial(go({ to: [{ memberId: 'outsider' }] }), 'Z_UNKNOWN_TARGET');
    expectScopeDenial(go({ to: [12345] }), 'Z_UNKNOWN_TARGET');
    expectScopeDenial(go({ to: ['営業の新人さん'] }), 'Z_UNKNOWN_TARGET');
  });
});

describe('authorize: levels, tools and actors', () => {
  it('denies a required level that is too low and allows at the boundary', () => {
    const t = tool({ name: 'view_team_tasks', requiredLevel: 3 });
    const ask = (level: number) =>
      authorize({ actor: actorAt(level), tool: t, proposal: proposal({}, 'view_team_tasks'), directory });
    expect(ask(2)).toMatchObject({ result: 'DENIED', reasonCode: 'Z_LEVEL_TOO_LOW' });
    expect(ask(3).result).toBe('ALLOWED');
  });

  it('defaults a missing required level to 2, and a malformed one to nobody', () => {
    const missing = tool({ requiredLevel: undefined as unknown as number });
    expect(requiredLevelOf(missing)).toBe(2);
    expect(run(1, {}, missing).reasonCode).toBe('Z_LEVEL_TOO_LOW');
    expect(run(2, {}, missing).result).toBe('ALLOWED');
    expect(run(6, {}, tool({ requiredLevel: 9 })).reasonCode).toBe('Z_LEVEL_TOO_LOW');
    expect(run(6, {}, tool({ requiredLevel: Number.NaN })).reasonCode).toBe('Z_LEVEL_TOO_LOW');
  });

  it('read-only tools still need the level', () => {
    expect(run(1, {}, tool({ effects: [], requiredLevel: 5 })).reasonCode).toBe('Z_LEVEL_TOO_LOW');
  });

  it.each([
    ['undefined', undefined, 'view_tasks'],
    ['name mismatch', tool({ name: 'other_tool' }), 'view_tasks'],
    ['disabled', tool({ enabled: false }), 'view_tasks'],
  ])('denies an unknown tool (%s)', (_n, t, name) => {
    const d = authorize({ actor: actorAt(6), tool: t, proposal: proposal({}, name), directory });
    expect(d).toMatchObject({ result: 'DENIED', reasonCode: 'Z_UNKNOWN_TOOL' });
  });

  it.each([7, -1, 2.5, Number.NaN, '6' as unknown as number])(
    'denies an actor level %p as Z_UNKNOWN_LEVEL',
    (level) => {
      expect(run(level, {})).toMatchObject({ result: 'DENIED', reasonCode: 'Z_UNKNOWN_LEVEL' });
    },
  );

  it('denies top-secret data below level 6', () => {
    expect(run(5, {}, readTool, true)).toMatchObject({ result: 'DENIED', reasonCode: 'Z_TOP_SECRET' });
    expect(run(6, {}, readTool, true).result).toBe('ALLOWED');
  });

  it('an unknown sender in a public room (level 0) may converse but use no tool at all', () => {
    const publicActor = actorAt(0, {
      known: false,
      memberId: null,
      name: null,
      departmentId: null,
      roomAuthority: 'public',
      source: 'public_unknown',
    });
    for (const t of [
      tool({ name: 'create_task', effects: ['db.task_create'], requiredLevel: 0 }),
      readTool,
      tool({ requiredLevel: 1 }),
    ]) {
      const d = authorize({ actor: publicActor, tool: t, proposal: proposal({}, t.name), directory });
      expect(d).toMatchObject({ result: 'DENIED', reasonCode: 'Z_PUBLIC_ROOM' });
    }
  });

  it('a stranger (not in the directory, DM or unlisted room) uses no tool, whatever the room says', () => {
    const stranger = actorAt(0, {
      known: false,
      memberId: null,
      name: null,
      departmentId: null,
      roomAuthority: 'member',
      source: 'stranger',
    });
    const d = authorize({ actor: stranger, tool: readTool, proposal: proposal({ user: 'm-own' }), directory });
    expect(d).toMatchObject({ result: 'DENIED', reasonCode: 'Z_STRANGER' });
  });

  it('a known member in a room marked public uses no tool: results would put internal data into the room', () => {
    const d = authorize({
      actor: actorAt(6, { roomAuthority: 'public' }),
      tool: readTool,
      proposal: proposal({ user: 'm-own' }),
      directory,
    });
    expect(d).toMatchObject({ result: 'DENIED', reasonCode: 'Z_PUBLIC_ROOM' });
    const unlisted = authorize({
      actor: actorAt(6, { roomAuthority: 'public', roomListed: false }),
      tool: readTool,
      proposal: proposal({ user: 'm-own' }),
      directory,
    });
    expect(unlisted.result).toBe('ALLOWED');
  });

  it('ignores what the LLM says about levels in parameters', () => {
    expect(run(1, { level: 6, requiredLevel: 0 }, tool({ requiredLevel: 4 })).reasonCode).toBe('Z_LEVEL_TOO_LOW');
  });
});

describe('filterToolsForActor', () => {
  const tools = [
    tool({ name: 'chat_lookup', requiredLevel: 0, effects: [] }),
    tool({ name: 'public_effect', requiredLevel: 0, effects: ['chatwork.post'] }),
    tool({ name: 'create_task', requiredLevel: 1, effects: ['db.task_create'] }),
    tool({ name: 'goal', requiredLevel: undefined as unknown as number, effects: ['db.goal'] }),
    tool({ name: 'team', requiredLevel: 3 }),
    tool({ name: 'salary', requiredLevel: 6 }),
    tool({ name: 'off', requiredLevel: 1, enabled: false }),
  ];
  const names = (level: number) =>
    filterToolsForActor({ level, roomAuthority: 'member', roomListed: true, source: 'directory' }, tools).map(
      (t) => t.name,
    );

  it('offers nothing in a room the directory marks public, or to a stranger', () => {
    expect(
      filterToolsForActor({ level: 6, roomAuthority: 'public', roomListed: true, source: 'directory' }, tools),
    ).toEqual([]);
    expect(
      filterToolsForActor({ level: 1, roomAuthority: 'member', roomListed: false, source: 'stranger' }, tools),
    ).toEqual([]);
  });

  it('a member in an unlisted room (the adapter guessed public) keeps their tools', () => {
    expect(
      filterToolsForActor({ level: 3, roomAuthority: 'public', roomListed: false, source: 'directory' }, tools).map(
        (t) => t.name,
      ),
    ).toContain('team');
  });

  it.each([
    [0, []],
    [1, ['chat_lookup', 'public_effect', 'create_task']],
    [2, ['chat_lookup', 'public_effect', 'create_task', 'goal']],
    [3, ['chat_lookup', 'public_effect', 'create_task', 'goal', 'team']],
    [5, ['chat_lookup', 'public_effect', 'create_task', 'goal', 'team']],
    [6, ['chat_lookup', 'public_effect', 'create_task', 'goal', 'team', 'salary']],
    [7, []],
    [Number.NaN, []],
  ])('level %p is offered %j', (level, expected) => {
    expect(names(level)).toEqual(expected);
  });
});
