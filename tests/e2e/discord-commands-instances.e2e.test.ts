import { FAKE_CHANNEL_ID, FAKE_GUILD_ID, startFakeDiscord, type FakeDiscord } from '../fakes/discord-server';
import { createTestDatabase } from '../helpers/db';
import { discordDirectory } from '../helpers/discord';
import { runService, type ServiceProcess } from '../helpers/process';
import { waitFor } from '../helpers/service';

/**
 * Issue 44: the commands are registered once however many instances start together, and not again on a restart;
 * the log says which were registered. Two service processes (`npm start`) on one database, one local
 * Discord-compatible server whose reads of the commands are slow enough for the two instances' reads to overlap.
 */
describe('Discord commands: registered once across instances and restarts', () => {
  let discord: FakeDiscord;
  const services: ServiceProcess[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    discord = await startFakeDiscord();
    // A stale registration from an older version: its description differs, so it is replaced (once).
    discord.guildCommands.set(FAKE_GUILD_ID, [{ id: '1', name: 'hisho', type: 1, description: 'old', options: [] }]);
    discord.set({ commandReadDelayMs: 3000 });
    const t = await createTestDatabase();
    await t.close();
    env = {
      NODE_ENV: 'production',
      PORT: '0',
      LOG_LEVEL: 'info',
      DATABASE_URL: t.url,
      DISCORD_BOT_TOKEN: discord.token,
      DISCORD_API_BASE_URL: discord.apiBaseUrl,
      CONSOLE_ENABLED: 'false',
      ORG_DIRECTORY_FILE: discordDirectory(FAKE_GUILD_ID, FAKE_CHANNEL_ID),
    };
  });
  afterAll(async () => {
    for (const s of services) if (s.child.exitCode === null) s.child.kill('SIGTERM');
    await Promise.all(services.map((s) => s.exited));
    await discord.stop();
  });

  const said = (s: ServiceProcess, msg: string) =>
    s
      .output()
      .split('\n')
      .filter((l) => l.includes(`"msg":"${msg}"`))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const checked = (s: ServiceProcess) =>
    said(s, 'discord commands registered').length + said(s, 'discord commands already registered').length;
  const puts = () => discord.calls.filter((c) => c.method === 'PUT');

  it('two instances starting together: one PUT; one says registered, the other already registered', async () => {
    services.push(runService(env), runService(env));
    await Promise.all(services.map((s) => s.ready));
    await waitFor(() => checked(services[0]!) + checked(services[1]!) === 2, 30000, 'both checked the commands');
    expect(puts().map((c) => [c.path, c.status])).toEqual([
      [`/applications/${discord.applicationId}/guilds/${FAKE_GUILD_ID}/commands`, 200],
    ]);
    const registered = services.flatMap((s) => said(s, 'discord commands registered'));
    expect(registered).toHaveLength(1);
    expect(registered[0]).toMatchObject({ guildId: FAKE_GUILD_ID, commands: ['hisho', 'Ask Hisho'] });
    expect(discord.commands.map((c) => c.name).sort()).toEqual(['Ask Hisho', 'hisho']);
    expect(discord.commands.find((c) => c.name === 'hisho')!.id).toBe('1'); // PUT keeps a command's id by name
    // Both read the commands with their localizations (the Japanese names are compared too).
    const gets = discord.calls.filter((c) => c.method === 'GET' && c.path.endsWith('/commands'));
    expect(gets.map((c) => c.query)).toEqual(['?with_localizations=true', '?with_localizations=true']);
  }, 60000);

  it('a restart finds them registered: no second PUT', async () => {
    const first = services[0]!;
    first.child.kill('SIGTERM');
    await first.exited;
    const again = runService(env);
    services.push(again);
    await again.ready;
    await waitFor(() => said(again, 'discord commands already registered').length === 1, 30000, 'restart checked');
    expect(puts()).toHaveLength(1);
  }, 60000);
});
