import { ConfigError, loadConfig } from '../../src/config/env';

describe('loadConfig', () => {
  it('applies the documented defaults when nothing is configured', () => {
    const cfg = loadConfig({});
    expect(cfg.PORT).toBe(3000);
    expect(cfg.ANTHROPIC_MODEL).toBe('claude-opus-5-5');
    expect(cfg.BOT_TIMEZONE).toBe('Asia/Tokyo');
    expect(cfg.CHATWORK_API_BASE_URL).toBe('https://api.chatwork.com/v2');
    expect(cfg.DATABASE_URL).toBeUndefined();
  });

  it('names the bad variable and never echoes its value', () => {
    let err: unknown;
    try {
      loadConfig({ PORT: 'not-a-port', DATABASE_URL: 'mysql://secret-password@host/db' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).toContain('PORT');
    expect(msg).toContain('DATABASE_URL');
    expect(msg).not.toContain('secret-password');
  });

  it('rejects an unknown time zone and a bad flag value', () => {
    expect(() => loadConfig({ BOT_TIMEZONE: 'Mars/Olympus' })).toThrow(/BOT_TIMEZONE/);
    expect(() => loadConfig({ SHADOW_MODE: 'yes' })).toThrow(/SHADOW_MODE/);
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ ANTHROPIC_API_KEY: '  ' }).ANTHROPIC_API_KEY).toBeUndefined();
  });
});
