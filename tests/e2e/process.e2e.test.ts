import { createTestDatabase } from '../helpers/db';
import { runService } from '../helpers/process';
import { startFakeDiscord } from '../fakes/discord-server';

const run = (env: Record<string, string>) => {
  const p = runService(env, 30000);
  p.ready.catch(() => undefined);
  return p;
};

describe('the service process (npm start)', () => {
  it('starts, serves health, and stops cleanly on SIGTERM within 10 s', async () => {
    const t = await createTestDatabase();
    await t.close();
    const p = run({ DATABASE_URL: t.url, PORT: '0' });
    const port = await p.ready;
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    const t0 = Date.now();
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10000);
  }, 40000);

  it('starts with Discord answering 503 and the console off: up, names its adapters, no console URL', async () => {
    const t = await createTestDatabase();
    await t.close();
    const discord = await startFakeDiscord();
    discord.set({ restStatus: 503 });
    const p = run({
      DATABASE_URL: t.url,
      PORT: '0',
      CONSOLE_ENABLED: 'false',
      DISCORD_BOT_TOKEN: discord.token,
      DISCORD_API_BASE_URL: discord.apiBaseUrl,
    });
    try {
      const port = await p.ready;
      const line = /Hisho is listening.*/.exec(p.output())![0];
      expect(line).toContain('adapters: discord,');
      expect(line).not.toContain('/console');
      const ready = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as { adapters: unknown };
      expect(ready.adapters).toEqual({ discord: 'down' });
      expect(p.output()).not.toContain(discord.token);
      p.child.kill('SIGTERM');
      expect(await p.exited).toBe(0);
    } finally {
      p.child.kill('SIGKILL');
      await discord.stop();
    }
  }, 40000);

  it('refuses a bad configuration with a message naming the variable, never its value', async () => {
    const p = run({ PORT: 'eighty', DATABASE_URL: 'mysql://root:hunter2secret@db/x' });
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain('PORT');
    expect(p.output()).toContain('DATABASE_URL');
    expect(p.output()).not.toContain('hunter2secret');
  }, 20000);
});
