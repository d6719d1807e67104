import { getNoticePreferences, setNoticePreference } from '../../handlers/notices';
import { ToolExecutor } from '../../src/tools/executor';
import { ToolRegistry } from '../../src/tools/registry';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { seedSample, toolContext } from './tool-context';

const exec = () => new ToolExecutor(new ToolRegistry([setNoticePreference, getNoticePreferences]));

describe('notice preference capabilities (R-P3)', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await seedSample(t.db);
  });
  afterAll(async () => t.close());
  beforeEach(async () => t.db.noticePreference.deleteMany());

  it('turns one kind off for the sender only', async () => {
    const ctx = await toolContext(t.db, 'tanaka-taro');
    const r = await exec().run('set_notice_preference', { kind: 'daily_digest', enabled: false }, ctx);
    expect(r).toMatchObject({
      status: 'ok',
      output: {
        changed: 'daily_digest',
        settings: { daily_digest: false, deadline_reminder: true, goal_checkin: true },
      },
    });
    const other = await exec().run('get_notice_preferences', {}, await toolContext(t.db, 'tanaka-hanako'));
    expect(other).toMatchObject({ output: { settings: { daily_digest: true } } });
  });

  it('opting in wins over the directory opt-out; "all" replaces earlier per-kind choices', async () => {
    const ctx = await toolContext(t.db, 'ito-yui'); // notices_opt_out: true in the directory
    expect(await exec().run('get_notice_preferences', {}, ctx)).toMatchObject({
      output: { settings: { daily_digest: false, deadline_reminder: false, goal_checkin: false } },
    });
    const yui = () => toolContext(t.db, 'ito-yui');
    await exec().run('set_notice_preference', { kind: 'deadline_reminder', enabled: true }, await yui());
    expect(await exec().run('get_notice_preferences', {}, ctx)).toMatchObject({
      output: { settings: { daily_digest: false, deadline_reminder: true, goal_checkin: false } },
    });
    await exec().run('set_notice_preference', { kind: 'all', enabled: true }, await yui());
    await exec().run('set_notice_preference', { kind: 'goal_checkin', enabled: false }, await yui());
    expect(await exec().run('get_notice_preferences', {}, ctx)).toMatchObject({
      output: { settings: { daily_digest: true, deadline_reminder: true, goal_checkin: false } },
    });
  });

  it('refuses unknown senders and unknown kinds', async () => {
    const off = { kind: 'all', enabled: false };
    const stranger = await exec().run('set_notice_preference', off, await toolContext(t.db, null));
    expect(stranger).toMatchObject({ status: 'error', code: 'NO_MEMBER' });
    const taro = await toolContext(t.db, 'tanaka-taro');
    const weather = await exec().run('set_notice_preference', { ...off, kind: 'weather' }, taro);
    expect(weather).toMatchObject({ status: 'error' });
    expect(await t.db.noticePreference.count()).toBe(0);
  });
});
