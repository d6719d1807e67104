import {
  cancelSchedule,
  changeSchedule,
  createRoomSchedule,
  createSchedule,
  listSchedules,
  pauseSchedule,
  resumeSchedule,
  snoozeReminder,
} from '../../handlers/schedules';
import { ToolExecutor } from '../../src/tools/executor';
import { ToolRegistry } from '../../src/tools/registry';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { NOW, seedSample, toolContext } from './tool-context';

const tools = [
  createSchedule,
  createRoomSchedule,
  listSchedules,
  pauseSchedule,
  resumeSchedule,
  changeSchedule,
  cancelSchedule,
  snoozeReminder,
];
const exec = () => new ToolExecutor(new ToolRegistry(tools));
const weeklyMonday = { freq: 'weekly', days: ['mon'], time: '09:00', holiday: 'next' };

describe('recurring schedule capabilities', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await seedSample(t.db);
  });
  afterAll(async () => t.close());
  beforeEach(async () => {
    await t.db.schedule.deleteMany({ where: { source: 'chat' } });
    await t.db.reminder.deleteMany();
  });

  it('declares who may: own schedules from level 1 (confirmed), room notices from level 3 (confirmed)', () => {
    expect(createSchedule).toMatchObject({ requiredLevel: 1, requiresConfirmation: true, effectKind: 'remind' });
    expect(createSchedule.paramRoles).toMatchObject({ person: 'reminder_target' });
    expect(createRoomSchedule).toMatchObject({ requiredLevel: 3, requiresConfirmation: true, risk: 'medium' });
    expect(createRoomSchedule.paramRoles).toMatchObject({ department: 'target_department' });
    for (const t of [pauseSchedule, resumeSchedule, cancelSchedule, changeSchedule, listSchedules, snoozeReminder])
      expect(t.requiredLevel).toBe(1);
  });

  it('the confirmation question renders the rule in Japanese with the first run on the business calendar', async () => {
    const ctx = { ...(await toolContext(t.db, 'watanabe-sho')), lang: 'ja' as const };
    // Friday 11/20: the next Monday 11/23 is 勤労感謝の日, so the first run is Tuesday 11/24.
    const d = await createSchedule.describe!(
      { kind: 'reminder', rule: weeklyMonday, text: '週報を出す', catch_up: 'once', quiet_hours: 'deliver' } as never,
      ctx,
    );
    expect(d.summary).toBe('この定期の予定を登録します。');
    expect(d.facts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ label: '繰り返し', value: '毎週月曜 9:00（休日は翌営業日）' }),
        expect.objectContaining({ label: '初回', value: '11/24（火）09:00' }),
        expect.objectContaining({ label: '内容', value: '週報を出す' }),
      ]),
    );
  });

  it('the rules people ask for are confirmed in Japanese and English with their first run (issue 40)', async () => {
    // Friday 11/20 10:00; Monday 11/23 is 勤労感謝の日.
    const asked: [unknown, string, string, string, string][] = [
      [
        { freq: 'monthly', day: [1, 15], time: '09:00' },
        '毎月1日・15日 9:00（土日祝・休業日はお休み）',
        '12/1（火）09:00',
        'Monthly on the 1st and 15th at 9:00 (not on weekends, holidays or closing days)',
        'Tue, Dec 1 09:00',
      ],
      [
        {
          freq: 'monthly',
          nth: [
            { n: 2, weekday: 'wed' },
            { n: 4, weekday: 'wed' },
          ],
          time: '10:00',
        },
        '毎月第2・第4水曜 10:00（土日祝・休業日はお休み）',
        '11/25（水）10:00',
        'Monthly on the 2nd and 4th Wednesday at 10:00 (not on weekends, holidays or closing days)',
        'Wed, Nov 25 10:00',
      ],
      [
        { freq: 'weekly', days: ['mon'], weeks: 2, time: '09:00' },
        '隔週月曜 9:00（土日祝・休業日はお休み）',
        '11/30（月）09:00',
        'Every other Monday at 9:00 (not on weekends, holidays or closing days)',
        'Mon, Nov 30 09:00',
      ],
      [
        { freq: 'monthly', bday: 3, time: '09:00' },
        '毎月第3営業日 9:00',
        '12/3（木）09:00',
        'Monthly on the 3rd business day at 9:00',
        'Thu, Dec 3 09:00',
      ],
      [
        { freq: 'monthly', bday: -1, time: '17:00' },
        '毎月最終営業日 17:00',
        '11/30（月）17:00',
        'Monthly on the last business day at 17:00',
        'Mon, Nov 30 17:00',
      ],
    ];
    for (const [rule, ja, firstJa, en, firstEn] of asked) {
      for (const [lang, repeats, first] of [
        ['ja', ja, firstJa],
        ['en', en, firstEn],
      ] as const) {
        const ctx = { ...(await toolContext(t.db, 'ito-yui')), lang };
        const input = { kind: 'reminder', rule, text: '定例の確認', catch_up: 'once', quiet_hours: 'deliver' };
        const d = await createSchedule.describe!(input as never, ctx);
        const fact = (label: string) => d.facts.find((f) => f.label === label)?.value;
        expect([fact(lang === 'ja' ? '繰り返し' : 'Repeats'), fact(lang === 'ja' ? '初回' : 'First')]).toEqual([
          repeats,
          first,
        ]);
      }
    }
    // 隔週 is stored with the week it counts from, so the second run is two weeks after the first.
    const made = await exec().run(
      'create_schedule',
      { kind: 'reminder', rule: { freq: 'weekly', days: ['mon'], weeks: 2, time: '09:00' }, text: '隔週の定例' },
      await toolContext(t.db, 'ito-yui'),
    );
    expect(made).toMatchObject({ status: 'ok', output: { schedule: { nextRun: '2026-11-30T09:00:00+09:00' } } });
    const row = await t.db.schedule.findFirstOrThrow({ where: { source: 'chat', text: '隔週の定例' } });
    expect(row.rule).toMatchObject({ weeks: 2, start: '2026-11-30' });
  });

  it('a level-1 member makes their own weekly reminder; a retried call returns the same schedule', async () => {
    const ctx = await toolContext(t.db, 'watanabe-sho');
    const input = { kind: 'reminder', rule: weeklyMonday, text: '週報を出す' };
    const a = await exec().run('create_schedule', input, ctx);
    expect(a).toMatchObject({
      status: 'ok',
      output: { schedule: { repeat: '毎週月曜 9:00（休日は翌営業日）', nextRun: '2026-11-24T09:00:00+09:00' } },
    });
    const b = await exec().run('create_schedule', input, ctx);
    expect(b).toMatchObject({ status: 'ok' });
    const rows = await t.db.schedule.findMany({ where: { source: 'chat' } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ownerMemberId: 'watanabe-sho', kind: 'reminder', platform: 'console' });
  });

  it('reminding someone else needs level 2; a digest is only of one’s own tasks', async () => {
    const low = await exec().run(
      'create_schedule',
      { kind: 'reminder', rule: weeklyMonday, text: '週報', person: '伊藤結衣' },
      await toolContext(t.db, 'watanabe-sho'),
    );
    expect(low).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
    const ok = await exec().run(
      'create_schedule',
      { kind: 'reminder', rule: weeklyMonday, text: '週報', person: '渡辺翔' },
      await toolContext(t.db, 'ito-yui'),
    );
    expect(ok).toMatchObject({ status: 'ok', output: { schedule: { person: '渡辺翔' } } });
    const digest = await exec().run(
      'create_schedule',
      { kind: 'digest', rule: { freq: 'business_days', time: '09:00' }, person: '渡辺翔' },
      await toolContext(t.db, 'ito-yui'),
    );
    expect(digest).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
  });

  it('refuses past the per-member limit with the sentence to say', async () => {
    const ctx = async () =>
      toolContext(t.db, 'ito-yui', { services: { scheduleLimits: { perMember: 2, perRoom: 50 } } });
    for (let i = 0; i < 2; i++)
      expect(
        await exec().run('create_schedule', { kind: 'reminder', rule: weeklyMonday, text: `用事${i}` }, await ctx()),
      ).toMatchObject({ status: 'ok' });
    const third = await exec().run(
      'create_schedule',
      { kind: 'reminder', rule: weeklyMonday, text: '用事3' },
      await ctx(),
    );
    expect(third).toMatchObject({ status: 'error', code: 'LIMIT_MEMBER' });
    expect(JSON.stringify(third)).toContain('定期の予定は1人2件までです');
  });

  it('a monthly rule needs exactly one of day or nth', async () => {
    const r = await exec().run(
      'create_schedule',
      { kind: 'reminder', rule: { freq: 'monthly', time: '10:00' }, text: '月次' },
      await toolContext(t.db, 'ito-yui'),
    );
    expect(r).toMatchObject({ status: 'error', code: 'BAD_RULE' });
  });

  it('a room notice for a department, by a level-3 member, mentions that department later', async () => {
    const r = await exec().run(
      'create_room_schedule',
      { rule: { freq: 'weekdays', time: '17:00' }, text: '日報を出しましょう', department: '営業部' },
      await toolContext(t.db, 'tanaka-taro', { platform: 'chatwork' }),
    );
    expect(r).toMatchObject({ status: 'ok', output: { department: '営業部' } });
    expect(await t.db.schedule.findFirst({ where: { source: 'chat' } })).toMatchObject({
      kind: 'room_reminder',
      departmentId: 'sales',
      roomId: '5001',
    });
  });

  it('pause, resume, change and cancel one’s own schedule; others’ and the directory’s are refused', async () => {
    const ctx = await toolContext(t.db, 'ito-yui');
    const made = await exec().run('create_schedule', { kind: 'reminder', rule: weeklyMonday, text: '週報' }, ctx);
    const id = (made as { output: { schedule: { scheduleId: string } } }).output.schedule.scheduleId;
    const run = async (tool: string, input: object, who = 'ito-yui') =>
      exec().run(tool, { schedule_id: id, ...input }, await toolContext(t.db, who));

    expect(await run('pause_schedule', {})).toMatchObject({ status: 'ok', output: { schedule: { paused: true } } });
    expect((await t.db.schedule.findUniqueOrThrow({ where: { id } })).nextRunAt).toBeNull();
    expect(await run('resume_schedule', {})).toMatchObject({
      status: 'ok',
      output: { schedule: { paused: false, nextRun: '2026-11-24T09:00:00+09:00' } },
    });
    const changed = await run('change_schedule', {
      rule: { freq: 'monthly', day: 'last', time: '17:00', holiday: 'previous' },
    });
    expect(changed).toMatchObject({
      status: 'ok',
      output: { schedule: { repeat: '毎月月末 17:00（休日は前営業日）', nextRun: '2026-11-30T17:00:00+09:00' } },
    });
    expect(await run('cancel_schedule', {}, 'watanabe-sho')).toMatchObject({ status: 'error', code: 'NOT_FOUND' });
    expect(await run('cancel_schedule', {})).toMatchObject({ status: 'ok', output: { cancelled: true } });
    expect(await exec().run('list_schedules', {}, ctx)).toMatchObject({ status: 'ok', output: { schedules: [] } });

    const directory = await exec().run('pause_schedule', { schedule_id: 'acme:daily-digest' }, ctx);
    expect(directory).toMatchObject({ status: 'error', code: 'DIRECTORY_SCHEDULE' });
    expect((await t.db.schedule.findUniqueOrThrow({ where: { id: 'acme:daily-digest' } })).enabled).toBe(true);
  });

  it('snooze to the next business day or to a time, not only within 24 hours (issue 40)', async () => {
    // Friday 11/20 17:00; Monday 11/23 is 勤労感謝の日, so 「次の営業日」 is Tuesday 11/24 (the Guardian's date).
    const friday5pm = new Date('2026-11-20T08:00:00.000Z');
    const sent = await t.db.reminder.create({
      data: {
        orgId: 'acme',
        platform: 'console',
        roomId: 'console-general',
        memberId: 'ito-yui',
        text: '週次レポートの提出',
        remindAt: friday5pm,
        status: 'sent',
      },
    });
    const at = async (value: string) =>
      exec().run(
        'snooze_reminder',
        { at: value },
        await toolContext(t.db, 'ito-yui', { now: new Date(friday5pm.getTime() + 5 * 60_000) }),
      );
    expect(await at('2026-11-24')).toMatchObject({
      status: 'ok',
      output: { remindAt: '2026-11-24T17:00:00+09:00', text: '週次レポートの提出' },
    });
    expect(await at('2026-11-24T09:30:00+09:00')).toMatchObject({
      status: 'ok',
      output: { remindAt: '2026-11-24T09:30:00+09:00' },
    });
    expect(await at('2026-11-20T16:00:00+09:00')).toMatchObject({ status: 'error', code: 'PAST_TIME' });
    const again = await t.db.reminder.findMany({ where: { snoozedFromId: sent.id }, orderBy: { remindAt: 'asc' } });
    expect(again.map((r) => [r.status, r.remindAt.toISOString()])).toEqual([
      ['scheduled', '2026-11-24T00:30:00.000Z'],
      ['scheduled', '2026-11-24T08:00:00.000Z'],
    ]);
  });

  it('snooze: the reminder just sent comes again after the minutes asked for', async () => {
    const sent = await t.db.reminder.create({
      data: {
        orgId: 'acme',
        platform: 'console',
        roomId: 'console-general',
        memberId: 'ito-yui',
        text: '請求書の確認',
        remindAt: new Date(NOW.getTime() - 60_000),
        status: 'sent',
      },
    });
    const ctx = await toolContext(t.db, 'ito-yui');
    const r = await exec().run('snooze_reminder', { minutes: 30 }, ctx);
    expect(r).toMatchObject({ status: 'ok', output: { remindAt: '2026-11-20T10:30:00+09:00', text: '請求書の確認' } });
    const again = await t.db.reminder.findFirstOrThrow({ where: { snoozedFromId: sent.id } });
    expect(again).toMatchObject({ status: 'scheduled', memberId: 'ito-yui' });
    // Nothing sent to someone else to snooze.
    const other = await exec().run('snooze_reminder', {}, await toolContext(t.db, 'watanabe-sho'));
    expect(other).toMatchObject({ status: 'error', code: 'NOTHING_TO_SNOOZE' });
  });
});
