import { sqlRunner } from '../../src/db/sql';
import { enqueueDueReminders } from '../../src/scheduler/reminders';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

/** One-off reminders and quiet hours (R-P3): a reminder due in quiet hours waits until they end, or is skipped. */
describe('due reminders and quiet hours', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await t.db.organization.create({
      data: { id: 'q-org', name: 'Q', timezone: 'Asia/Tokyo', quietHours: '21:00-08:00' },
    });
    await t.db.member.createMany({
      data: [
        { orgId: 'q-org', id: 'night-owl', name: '夜型さん', level: 1, quietHours: '01:00-06:00' },
        { orgId: 'q-org', id: 'usual', name: '普通さん', level: 1 },
      ],
    });
  });
  afterAll(async () => {
    await t.close();
  });

  const remind = (memberId: string, remindAt: Date, extra: Record<string, unknown> = {}) =>
    t.db.reminder.create({
      data: { orgId: 'q-org', platform: 'console', roomId: 'q-room', memberId, text: '日報', remindAt, ...extra },
    });
  const item = (id: string) => t.db.workItem.findUnique({ where: { dedupeKey: `reminder:${id}` } });

  it('a one-off reminder due at 22:30 in the organisation’s quiet hours is sent at 08:00, not at night', async () => {
    const now = new Date('2026-12-01T22:30:20+09:00');
    const r = await remind('usual', new Date('2026-12-01T22:30:00+09:00'));
    await enqueueDueReminders(sqlRunner(t.db), now);
    expect(await item(r.id)).toBeNull();
    const row = await t.db.reminder.findUniqueOrThrow({ where: { id: r.id } });
    expect(row.status).toBe('scheduled');
    expect(row.remindAt.toISOString()).toBe(new Date('2026-12-02T08:00:00+09:00').toISOString());
    // At 08:00 it goes out, once.
    expect(await enqueueDueReminders(sqlRunner(t.db), new Date('2026-12-02T08:00:05+09:00'))).toBeGreaterThanOrEqual(1);
    expect(await item(r.id)).not.toBeNull();
  });

  it('the member’s own quiet hours win over the organisation’s', async () => {
    const r = await remind('night-owl', new Date('2026-12-03T22:30:00+09:00'));
    await enqueueDueReminders(sqlRunner(t.db), new Date('2026-12-03T22:30:10+09:00'));
    expect(await item(r.id)).not.toBeNull();
  });

  it('a reminder whose quiet-hours policy is skip is not sent at all', async () => {
    const r = await remind('usual', new Date('2026-12-04T23:00:00+09:00'), { quietPolicy: 'skip' });
    await enqueueDueReminders(sqlRunner(t.db), new Date('2026-12-04T23:00:10+09:00'));
    await enqueueDueReminders(sqlRunner(t.db), new Date('2026-12-05T09:00:00+09:00'));
    expect(await item(r.id)).toBeNull();
    expect((await t.db.reminder.findUniqueOrThrow({ where: { id: r.id } })).status).toBe('skipped');
  });
});
