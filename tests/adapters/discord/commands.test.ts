import { COMMAND_DEFINITIONS, registerCommands, sameCommands } from '../../../src/adapters/discord/commands';
import { captureLogger } from '../../helpers/logs';

/** The commands as Discord answers GET …/commands?with_localizations=true (ids, versions and defaults added). */
const asRegistered = () =>
  COMMAND_DEFINITIONS.map((c, i) => ({
    ...c,
    id: String(1000 + i),
    application_id: '111',
    version: '2',
    default_member_permissions: null,
    nsfw: false,
    contexts: null,
    integration_types: [0],
    options: c.options?.map((o) => ({ ...o })),
  }));

describe('Discord commands (issue 44)', () => {
  it('are English by default with Japanese names: /hisho 依頼 公開, and 「Hishoに頼む」 on a message', () => {
    const [hisho, ask] = COMMAND_DEFINITIONS;
    expect(hisho).toMatchObject({ type: 1, name: 'hisho' });
    expect(hisho!.options!.map((o) => [o.name, o.type, o.name_localizations?.ja])).toEqual([
      ['request', 3, '依頼'],
      ['public', 5, '公開'],
    ]);
    expect(ask).toMatchObject({
      type: 3,
      name: 'Ask Hisho',
      description: '',
      name_localizations: { ja: 'Hishoに頼む' },
    });
    for (const c of COMMAND_DEFINITIONS) expect(c.description.length).toBeLessThanOrEqual(100);
  });

  it('compare equal to what Discord answers for them, in any order; a changed localization differs', () => {
    expect(sameCommands(asRegistered())).toBe(true);
    expect(sameCommands(asRegistered().reverse())).toBe(true);
    const changed = asRegistered();
    changed[0]!.options![0]!.name_localizations = { ja: '依頼内容' };
    expect(sameCommands(changed)).toBe(false);
    expect(sameCommands(asRegistered().slice(0, 1))).toBe(false);
    expect(sameCommands([...asRegistered(), { type: 1, name: 'old', description: 'x' }])).toBe(false);
  });

  it('registers per guild only when they differ, locked; a failing guild does not stop the others', async () => {
    const log = captureLogger();
    const registered = new Map<string, unknown>([['g1', asRegistered()]]);
    const calls: string[] = [];
    const rest = {
      get: async (route: string) => {
        calls.push(`GET ${route}`);
        if (route.includes('g3')) throw Object.assign(new Error('Missing Access'), { status: 403 });
        return registered.get(route.split('/')[4]!) ?? [];
      },
      put: async (route: string) => {
        calls.push(`PUT ${route}`);
        return [];
      },
    };
    let locked = 0;
    const result = await registerCommands({
      rest: rest as never,
      applicationId: '111',
      guildIds: ['g1', 'g2', 'g3'],
      lock: async (fn) => {
        locked++;
        return fn();
      },
      logger: log.logger,
    });
    expect(result).toEqual({ g1: 'unchanged', g2: 'registered', g3: 'failed' });
    expect(calls.filter((c) => c.startsWith('PUT'))).toEqual(['PUT /applications/111/guilds/g2/commands']);
    expect(locked).toBe(3);
    expect(log.lines.map((l) => [l.msg, l.guildId])).toEqual([
      ['discord commands already registered', 'g1'],
      ['discord commands registered', 'g2'],
      ['discord command registration failed', 'g3'],
    ]);
  });
});
