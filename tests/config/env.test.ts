import { ConfigError, loadConfig, retiredVariables } from '../../src/config/env';

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

  it('says each problem as one sentence in the operator language, with the .env line and an example (issue 41)', () => {
    const fail = (env: Record<string, string>, lang: 'ja' | 'en') => {
      try {
        loadConfig(env, { lang, origin: (v) => (v === 'PORT' ? { file: '.env', line: 3 } : null) });
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error('no error');
    };
    const bad = { PORT: 'eighty', DATABASE_POOL_MAX: '0', LOG_LEVEL: 'loud', ADMIN_TOKEN: 'short' };
    const en = fail(bad, 'en').split('\n');
    expect(en).toEqual([
      'Hisho could not start: PORT in .env (line 3) must be a number, e.g. PORT=3000; correct it and start again ' +
        '(every variable is explained in .env.example).',
      'Hisho could not start: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, e.g. ' +
        'LOG_LEVEL=info; correct it and start again (every variable is explained in .env.example).',
      'Hisho could not start: ADMIN_TOKEN must be at least 16 characters; correct it and start again ' +
        '(every variable is explained in .env.example).',
      'Hisho could not start: DATABASE_POOL_MAX must be at least 1, e.g. DATABASE_POOL_MAX=10; correct it and ' +
        'start again (every variable is explained in .env.example).',
    ]);
    const ja = fail(bad, 'ja').split('\n');
    expect(ja[0]).toBe('Hisho を起動できません: .env の3行目の PORT は数字にしてください（例: PORT=3000）。');
    expect(ja[2]).toBe('Hisho を起動できません: ADMIN_TOKEN は16文字以上にしてください。');
    // zod's own texts never reach the operator.
    expect([...en, ...ja].join('\n')).not.toMatch(
      /Invalid input|expected number|received NaN|Too small|Invalid option/,
    );
    expect(fail({ WORK_MAX_STEPS: '2.5' }, 'ja')).toBe(
      'Hisho を起動できません: WORK_MAX_STEPS は整数にしてください（例: WORK_MAX_STEPS=8）。',
    );
  });

  it('names the .env line a variable was set on, unless the real environment overrides it', () => {
    const fs = require('node:fs') as typeof import('node:fs');
    const os = require('node:os') as typeof import('node:os');
    const path = require('node:path') as typeof import('node:path');
    const { dotEnvOrigin } = require('../../src/config/env') as typeof import('../../src/config/env');
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-env-')), '.env');
    fs.writeFileSync(file, '# comment\nPORT=1\nexport HISHO_ORIGIN_TEST=x\nHISHO_ORIGIN_TEST=y\nPATH=/nope\n');
    const origin = dotEnvOrigin(file);
    expect(origin('PORT')).toEqual(process.env.PORT === undefined ? { file: '.env', line: 2 } : null);
    expect(origin('HISHO_ORIGIN_TEST')).toEqual({ file: '.env', line: 4 });
    expect(origin('PATH')).toBeNull();
    expect(origin('LOG_LEVEL')).toBeNull();
  });

  it('rejects an unknown time zone and a bad flag value', () => {
    expect(() => loadConfig({ BOT_TIMEZONE: 'Mars/Olympus' })).toThrow(/BOT_TIMEZONE/);
    expect(() => loadConfig({ SHADOW_MODE: 'yes' })).toThrow(/SHADOW_MODE/);
  });

  it('runs every role by default and refuses an unknown HISHO_ROLE, naming the roles', () => {
    expect(loadConfig({}).HISHO_ROLE).toBe('all');
    expect(loadConfig({ HISHO_ROLE: 'turns' }).HISHO_ROLE).toBe('turns');
    expect(() => loadConfig({ HISHO_ROLE: 'worker' })).toThrow(
      /HISHO_ROLE must be one of all, intake, turns, background/,
    );
  });

  it('refuses a remote console without ADMIN_TOKEN, naming the variables and not the token', () => {
    expect(() => loadConfig({ CONSOLE_ALLOW_REMOTE: 'true' })).toThrow(
      /CONSOLE_ALLOW_REMOTE is true, which needs ADMIN_TOKEN/,
    );
    expect(() => loadConfig({ CONSOLE_ALLOW_REMOTE: 'true', ADMIN_TOKEN: 'short' })).toThrow(
      /ADMIN_TOKEN must be at least 16 characters/,
    );
    const ok = loadConfig({
      CONSOLE_ALLOW_REMOTE: 'true',
      ADMIN_TOKEN: 'a-long-admin-token-0123',
      CONSOLE_ALLOWED_HOSTS: 'Hisho.Example.com, intranet',
    });
    expect(ok.CONSOLE_ALLOWED_HOSTS).toEqual(['hisho.example.com', 'intranet']);
    expect(loadConfig({ CONSOLE_ALLOW_REMOTE: 'true', CONSOLE_ENABLED: 'false' }).CONSOLE_ALLOW_REMOTE).toBe(true);
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ ANTHROPIC_API_KEY: '  ' }).ANTHROPIC_API_KEY).toBeUndefined();
  });

  it('accepts the variables of the removed worker threads, and names those set as retired', () => {
    const old = { WORKERS: '2', WORKER_NICE: '10', INTAKE_YIELD_AT: '16', INTAKE_YIELD_BUSY: '', PORT: '3001' };
    expect(loadConfig(old).PORT).toBe(3001);
    expect('WORKERS' in loadConfig(old)).toBe(false);
    expect(retiredVariables(old)).toEqual(['WORKERS', 'WORKER_NICE', 'INTAKE_YIELD_AT']);
    expect(retiredVariables({ PORT: '3001', WORKER_CONCURRENCY: '4' })).toEqual([]);
  });
});

describe('environment()', () => {
  it('reads .env underneath the real environment', () => {
    const fs = require('node:fs') as typeof import('node:fs');
    const os = require('node:os') as typeof import('node:os');
    const path = require('node:path') as typeof import('node:path');
    const { environment } = require('../../src/config/env') as typeof import('../../src/config/env');
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-env-')), '.env');
    fs.writeFileSync(file, 'PERSONA=polite\nHISHO_TEST_ONLY_VAR=from-file\nPATH=/should/not/win\n');
    const env = environment(file);
    expect(env.PERSONA).toBe(process.env.PERSONA ?? 'polite');
    expect(env.HISHO_TEST_ONLY_VAR).toBe('from-file');
    expect(env.PATH).toBe(process.env.PATH);
    expect(loadConfig(environment(path.join(path.dirname(file), 'missing.env'))).PORT).toBeGreaterThanOrEqual(0);
  });
});
