import { cancelReminder, createReminder, listReminders } from '../../handlers/reminders';
import { ToolExecutor } from '../../src/tools/executor';
import { ToolRegistry } from '../../src/tools/registry';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { newKey, seedSample, toolContext } from './tool-context';

const exec = () => new ToolExecutor(new ToolRegistry([createReminder, listReminders, cancelReminder]));

describe('reminder capabilities', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await seedSample(t.db);
  });
  afterAll(async () => t.close());
  beforeEach(async () => t.db.reminder.deleteMany());

  describe('create_reminder', () => {
    it('reminds the sender by default (a contractor may remind themselves)', async () => {
      const ctx = await toolContext(t.db, 'watanabe-sho');
      const r = await exec().run('create_reminder', { when: '2026-11-21T15:00:00+09:00', text: '請求書を送る' }, ctx);
      expect(r).toMatchObject({
        status: 'ok',
        output: {
          remindAt: '2026-11-21T15:00:00+09:00',
          person: { memberId: 'watanabe-sho', name: '渡辺翔' },
          text: '請求書を送る',
        },
      });
      const row = await t.db.reminder.findFirstOrThrow();
      expect(row).toMatchObject({
        orgId: 'acme',
        platform: 'console',
        roomId: 'console-general',
        memberId: 'watanabe-sho',
        status: 'scheduled',
        idempotencyKey: ctx.idempotencyKey,
      });
      expect(row.remindAt.toISOString()).toBe('2026-11-21T06:00:00.000Z');
    });

    it('reads a bare date as 09:00 local time', async () => {
      const r = await exec().run(
        'create_reminder',
        { when: '2026-11-24', text: '会議' },
        await toolContext(t.db, 'ito-yui'),
      );
      expect(r).toMatchObject({ status: 'ok', output: { remindAt: '2026-11-24T09:00:00+09:00' } });
      expect((await t.db.reminder.findFirstOrThrow()).remindAt.toISOString()).toBe('2026-11-24T00:00:00.000Z');
    });

    it('refuses to let a level 1 member remind someone else', async () => {
      const r = await exec().run(
        'create_reminder',
        { when: '2026-11-24', text: '会議', person: '田中太郎' },
        await toolContext(t.db, 'watanabe-sho'),
      );
      expect(r).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
      expect(await t.db.reminder.count()).toBe(0);
    });

    it('lets a level 2 member remind someone else, asking when the name is ambiguous', async () => {
      const amb = await exec().run(
        'create_reminder',
        { when: '2026-11-24', text: '会議', person: '田中さん' },
        await toolContext(t.db, 'ito-yui'),
      );
      expect(amb).toMatchObject({ status: 'clarify', question: '田中さんが2人います。どちらの方ですか？' });
      const r = await exec().run(
        'create_reminder',
        { when: '2026-11-24', text: '会議', person: '田中花子' },
        await toolContext(t.db, 'ito-yui', { platform: 'chatwork' }),
      );
      expect(r).toMatchObject({ status: 'ok', output: { person: { memberId: 'tanaka-hanako', name: '田中花子' } } });
      expect(await t.db.reminder.findFirstOrThrow()).toMatchObject({
        memberId: 'tanaka-hanako',
        platform: 'chatwork',
        roomId: '5001',
      });
    });

    it('refuses past times and non-ISO values', async () => {
      expect(
        await exec().run('create_reminder', { when: '2026-11-20', text: 'x' }, await toolContext(t.db, 'ito-yui')),
      ).toMatchObject({ status: 'error', code: 'PAST_TIME' });
      expect(
        await exec().run('create_reminder', { when: 'そのうち', text: 'x' }, await toolContext(t.db, 'ito-yui')),
      ).toMatchObject({ status: 'error', code: 'INVALID_DATE' });
      expect(await t.db.reminder.count()).toBe(0);
    });

    it('is idempotent per key', async () => {
      const key = newKey();
      const a = await exec().run(
        'create_reminder',
        { when: '2026-11-24', text: '会議' },
        await toolContext(t.db, 'ito-yui', { key }),
      );
      const b = await exec().run(
        'create_reminder',
        { when: '2026-11-24', text: '会議' },
        await toolContext(t.db, 'ito-yui', { key }),
      );
      expect(b).toMatchObject({ status: 'ok', output: (a as { output: unknown }).output });
      expect(await t.db.reminder.count()).toBe(1);
    });

    it('refuses unknown senders', async () => {
      expect(
        await exec().run('create_reminder', { when: '2026-11-24', text: 'x' }, await toolContext(t.db, null)),
      ).toMatchObject({ status: 'error', code: 'NO_MEMBER' });
    });
  });

  describe('list_reminders and cancel_reminder', () => {
    async function reminder(memberId: string, remindAt: string, status = 'scheduled') {
      return t.db.reminder.create({
        data: {
          orgId: 'acme',
          platform: 'console',
          roomId: 'console-general',
          memberId,
          text: `${memberId} ${remindAt}`,
          remindAt: new Date(remindAt),
          status,
        },
      });
    }

    it("lists only the sender's scheduled reminders, soonest first", async () => {
      await reminder('ito-yui', '2026-11-25T00:00:00Z');
      await reminder('ito-yui', '2026-11-22T00:00:00Z');
      await reminder('ito-yui', '2026-11-23T00:00:00Z', 'cancelled');
      await reminder('tanaka-taro', '2026-11-21T00:00:00Z');
      const r = await exec().run('list_reminders', {}, await toolContext(t.db, 'ito-yui'));
      expect(r).toMatchObject({ status: 'ok', output: { more: false } });
      const items = (r as { output: { reminders: { remindAt: string }[] } }).output.reminders;
      expect(items.map((x) => x.remindAt)).toEqual(['2026-11-22T09:00:00+09:00', '2026-11-25T09:00:00+09:00']);
    });

    it('cancels own reminders only', async () => {
      const mine = await reminder('ito-yui', '2026-11-25T00:00:00Z');
      const theirs = await reminder('tanaka-taro', '2026-11-25T00:00:00Z');
      const sent = await reminder('ito-yui', '2026-11-19T00:00:00Z', 'sent');
      const ctx = async () => toolContext(t.db, 'ito-yui');
      expect(await exec().run('cancel_reminder', { reminder_id: mine.id }, await ctx())).toMatchObject({
        status: 'ok',
        output: { status: 'cancelled', alreadyCancelled: false },
      });
      expect(await exec().run('cancel_reminder', { reminder_id: mine.id }, await ctx())).toMatchObject({
        status: 'ok',
        output: { alreadyCancelled: true },
      });
      expect(await exec().run('cancel_reminder', { reminder_id: theirs.id }, await ctx())).toMatchObject({
        status: 'error',
        code: 'NOT_FOUND',
      });
      expect(await exec().run('cancel_reminder', { reminder_id: sent.id }, await ctx())).toMatchObject({
        status: 'error',
        code: 'ALREADY_SENT',
      });
      expect((await t.db.reminder.findUniqueOrThrow({ where: { id: theirs.id } })).status).toBe('scheduled');
    });

    it('cancels a reminder already queued by the scheduler (its notice is never sent), listed until then', async () => {
      const queued = await reminder('ito-yui', '2026-11-20T00:30:00Z', 'queued');
      const listed = await exec().run('list_reminders', {}, await toolContext(t.db, 'ito-yui'));
      const items = (listed as { output: { reminders: { reminderId: string }[] } }).output.reminders;
      expect(items.map((x) => x.reminderId)).toEqual([queued.id]);
      expect(
        await exec().run('cancel_reminder', { reminder_id: queued.id }, await toolContext(t.db, 'ito-yui')),
      ).toMatchObject({ status: 'ok', output: { status: 'cancelled', alreadyCancelled: false } });
      expect((await t.db.reminder.findUniqueOrThrow({ where: { id: queued.id } })).status).toBe('cancelled');
    });

    it('says honestly that a reminder being sent is already on its way', async () => {
      const sending = await reminder('ito-yui', '2026-11-20T00:30:00Z', 'sending');
      const r = await exec().run('cancel_reminder', { reminder_id: sending.id }, await toolContext(t.db, 'ito-yui'));
      expect(r).toMatchObject({ status: 'error', code: 'ALREADY_ON_ITS_WAY' });
      expect((r as { modelMessage: string }).modelMessage).toMatch(/already on its way/);
      expect((await t.db.reminder.findUniqueOrThrow({ where: { id: sending.id } })).status).toBe('sending');
    });
  });
});
