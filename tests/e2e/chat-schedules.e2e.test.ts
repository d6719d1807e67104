import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { TestClock } from '../helpers/clock';
import { consoleBotMessages, consoleSay } from '../helpers/console';
import { startTestService, waitFor, type TestService } from '../helpers/service';

/**
 * Schedules people make by asking (issue 31), through real turns with the fake model proposing the calls: the
 * confirmation question, the Gate, the sweep on a fixed clock, quiet hours, snooze, pause/resume/cancel.
 * Organisation: the sample directory (quiet hours 21:00–08:00, 年末年始休業 12/29–1/3).
 */
describe('chat-made schedules (console, fixed clock)', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  const clock = new TestClock(new Date('2026-11-20T10:00:00+09:00'));
  let room = 0;

  beforeAll(async () => {
    svc = await startTestService({}, { now: clock.now, reminderSweepMs: 100 });
  });
  afterAll(async () => {
    await svc.close();
  });
  afterEach(() => {
    llm.stop();
  });

  const at = (iso: string) => new Date(`${iso}+09:00`);
  const bot = (r: string) => consoleBotMessages(svc, r);
  async function say(member: string, r: string, text: string, n: number): Promise<string> {
    await consoleSay(svc, member, r, text);
    const m = await waitFor(async () => ((await bot(r)).length >= n ? bot(r) : null), 8000, `bot message #${n}`);
    return m[n - 1]!.text;
  }
  /** Moves the clock and waits until the sweep has looked at the new time (two ticks). */
  async function tick(iso: string): Promise<void> {
    clock.set(at(iso));
    await new Promise((r) => setTimeout(r, 400));
  }

  it('a weekly Monday reminder made by asking skips the 勤労感謝の日 Monday to Tuesday, then runs on Mondays', async () => {
    const r = `c-weekly-${++room}`;
    clock.set(at('2026-11-20T10:00:00'));
    const rule = { freq: 'weekly', days: ['mon'], time: '09:00', holiday: 'next' };
    llm.script(toolCall('create_schedule', { kind: 'reminder', rule, text: '週報を出す' }));
    const q = await say('watanabe-sho', r, '毎週月曜9時に週報のリマインドして。祝日なら次の営業日で', 1);
    expect(q).toContain('毎週月曜 9:00（休日は翌営業日）');
    expect(q).toContain('11/24（火）09:00');
    llm.script(replyCall('毎週月曜9時に週報のリマインドを登録したウル🐺'));
    await say('watanabe-sho', r, 'はい', 2);
    const s = await waitFor(() => svc.db.schedule.findFirst({ where: { source: 'chat', roomId: r } }), 5000, 'row');
    expect(s.nextRunAt).toEqual(at('2026-11-24T09:00:00'));

    llm.script(replyCall('渡辺さん、週報を出す時間ウル🐺'), replyCall('渡辺さん、今週も週報ウル🐺'));
    await tick('2026-11-23T09:00:30'); // the holiday: nothing
    expect(await bot(r)).toHaveLength(2);
    await tick('2026-11-24T09:00:20');
    await waitFor(async () => (await bot(r)).length === 3, 8000, 'Tuesday reminder');
    await tick('2026-11-24T09:05:00'); // sweeping again sends nothing more
    await tick('2026-11-30T09:00:10');
    await waitFor(async () => (await bot(r)).length === 4, 8000, 'next Monday reminder');
    const runs = await svc.db.scheduleRun.findMany({ where: { scheduleId: s.id }, orderBy: { period: 'asc' } });
    expect(runs.map((x) => [x.period, x.status])).toEqual([
      [at('2026-11-24T09:00:00'), 'fired'],
      [at('2026-11-30T09:00:00'), 'fired'],
    ]);
    expect((await bot(r)).slice(2).map((m) => m.accountId)).toEqual(['watanabe-sho', 'watanabe-sho']);
  });

  it('a one-off reminder due in quiet hours is sent when they end, not at night', async () => {
    const r = `c-quiet-${++room}`;
    clock.set(at('2026-12-01T20:00:00'));
    llm.script(
      toolCall('create_reminder', { when: '2026-12-01T22:30:00+09:00', text: '明日の資料を確認' }),
      replyCall('22時半にリマインドするウル🐺'),
    );
    await say('ito-yui', r, '22時半に明日の資料の確認をリマインドして', 1);
    await tick('2026-12-01T22:30:10');
    await tick('2026-12-01T23:59:00');
    expect(await bot(r)).toHaveLength(1);
    const row = await svc.db.reminder.findFirstOrThrow({ where: { roomId: r } });
    expect(row.remindAt).toEqual(at('2026-12-02T08:00:00'));
    llm.script(replyCall('伊藤さん、明日の資料を確認する時間ウル🐺'));
    await tick('2026-12-02T08:00:05');
    await waitFor(async () => (await bot(r)).length === 2, 8000, 'morning reminder');
  });

  it('「30分後にもう一度」 answering a reminder sends it again 30 minutes later', async () => {
    const r = `c-snooze-${++room}`;
    clock.set(at('2026-12-02T10:00:00'));
    await svc.db.reminder.create({
      data: {
        orgId: 'acme',
        platform: 'console',
        roomId: r,
        memberId: 'ito-yui',
        text: '請求書の送付',
        remindAt: at('2026-12-02T10:00:00'),
      },
    });
    llm.script(replyCall('伊藤さん、請求書の送付の時間ウル🐺'));
    await tick('2026-12-02T10:00:05');
    await waitFor(async () => (await bot(r)).length === 1, 8000, 'first reminder');
    await waitFor(
      async () => (await svc.db.reminder.findFirst({ where: { roomId: r, status: 'sent' } })) !== null,
      5000,
      'sent',
    );
    llm.script(toolCall('snooze_reminder', { minutes: 30 }), replyCall('30分後にもう一度知らせるウル🐺'));
    await say('ito-yui', r, '30分後にもう一度言って', 2);
    const again = await svc.db.reminder.findFirstOrThrow({ where: { roomId: r, snoozedFromId: { not: null } } });
    expect(again).toMatchObject({ text: '請求書の送付', status: 'scheduled' });
    expect(again.remindAt.getTime()).toBe(clock.current.getTime() + 30 * 60_000);
    llm.script(replyCall('伊藤さん、改めて請求書の送付ウル🐺'));
    await tick('2026-12-02T10:20:00');
    expect(await bot(r)).toHaveLength(2);
    await tick('2026-12-02T10:31:00');
    await waitFor(async () => (await bot(r)).length === 3, 8000, 'snoozed reminder');
  });

  it('a level-1 member asking for a room-wide daily notice is refused, told why, and nothing is stored', async () => {
    const r = `c-refused-${++room}`;
    clock.set(at('2026-12-02T11:00:00'));
    llm.script(
      toolCall('create_room_schedule', { rule: { freq: 'daily', time: '09:00' }, text: '朝礼の時間です' }),
      replyCall('ごめんウル、ルーム全体への定期連絡は登録できないウル🐺'),
    );
    const reply = await say('watanabe-sho', r, '毎日9時にこのルームのみんなに朝礼の連絡を流して', 1);
    // The model was told why (the level rule, from the Gate), and its reply says it could not.
    const told = JSON.stringify(llm.requests.at(-1)!.messages);
    expect(told).toContain('DENIED (Z_LEVEL_TOO_LOW)');
    expect(reply).toMatch(/できない|できません/);
    expect(await svc.db.schedule.count({ where: { source: 'chat', roomId: r } })).toBe(0);
    const turn = await waitFor(
      () => svc.db.turnRecord.findFirst({ where: { roomId: r, kind: 'user_request' } }),
      5000,
      'turn record',
    );
    expect(turn.authResult).not.toBe('ALLOWED');
  });

  it('pause, resume and cancel by asking', async () => {
    const r = `c-manage-${++room}`;
    clock.set(at('2026-12-03T10:00:00'));
    llm.script(toolCall('create_schedule', { kind: 'digest', rule: { freq: 'business_days', time: '09:00' } }));
    await say('ito-yui', r, '毎朝9時に今日のタスクを教えて', 1);
    llm.script(replyCall('営業日の朝9時にタスクのまとめを送るウル🐺'));
    await say('ito-yui', r, 'はい', 2);
    const s = await waitFor(() => svc.db.schedule.findFirst({ where: { source: 'chat', roomId: r } }), 5000, 'row');
    expect(s).toMatchObject({ kind: 'digest', ownerMemberId: 'ito-yui', nextRunAt: at('2026-12-04T09:00:00') });

    llm.script(toolCall('pause_schedule', { schedule_id: s.id }), replyCall('朝のタスク通知を止めたウル🐺'));
    await say('ito-yui', r, '朝のタスク通知、しばらく止めて', 3);
    expect(await svc.db.schedule.findUniqueOrThrow({ where: { id: s.id } })).toMatchObject({
      enabled: false,
      nextRunAt: null,
    });
    await tick('2026-12-04T09:00:10'); // paused: nothing fires
    expect(await svc.db.scheduleRun.count({ where: { scheduleId: s.id } })).toBe(0);

    llm.script(toolCall('resume_schedule', { schedule_id: s.id }), replyCall('再開したウル🐺'));
    await say('ito-yui', r, 'やっぱり朝の通知また送って', 4);
    expect(await svc.db.schedule.findUniqueOrThrow({ where: { id: s.id } })).toMatchObject({
      enabled: true,
      nextRunAt: at('2026-12-07T09:00:00'),
    });

    llm.script(toolCall('cancel_schedule', { schedule_id: s.id }), replyCall('朝のタスク通知を取り消したウル🐺'));
    await say('ito-yui', r, '朝のタスク通知はもういらない、消して', 5);
    const gone = await svc.db.schedule.findUniqueOrThrow({ where: { id: s.id } });
    expect(gone.cancelledAt).not.toBeNull();
    await tick('2026-12-07T09:00:10');
    expect(await svc.db.scheduleRun.count({ where: { scheduleId: s.id } })).toBe(0);
  });
});
