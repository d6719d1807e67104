import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { futureTokyo, TestClock, tokyoAt } from '../helpers/clock';
import { startTestService, waitFor, type TestService } from '../helpers/service';

describe('scheduled proactive notices (R-P1..R-P3, console)', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  // Tuesday 09:00:10 Tokyo, a week or more ahead of the real clock.
  const clock = new TestClock(futureTokyo(1, '09:00:10'));

  beforeAll(async () => {
    svc = await startTestService({}, { noticeScheduler: true, now: clock.now, scheduleReloadMs: 3_600_000 });
  });
  afterAll(async () => {
    await svc.close();
  });
  afterEach(async () => {
    llm.stop();
    await svc.db.task.deleteMany();
    await svc.db.noticePreference.deleteMany();
  });

  /** Only the named schedule runs, with this cron, as if it had existed for a day. */
  async function onlySchedule(id: string, cron: string): Promise<void> {
    await svc.db.schedule.updateMany({ data: { enabled: false } });
    await svc.db.scheduleRun.deleteMany({ where: { scheduleId: `acme:${id}` } });
    await svc.db.schedule.update({
      where: { id: `acme:${id}` },
      data: { enabled: true, cron, createdAt: new Date(clock.current.getTime() - 86_400_000) },
    });
    await svc.scheduler!.reload();
  }
  const task = (assignee: string, title: string, dueAt: Date, by?: string) =>
    svc.db.task.create({
      data: { orgId: 'acme', title, assigneeMemberId: assignee, createdByMemberId: by ?? assignee, dueAt },
    });
  const notices = () =>
    svc.db.conversationMessage.findMany({
      where: { platform: 'console', roomId: 'console-general', role: 'assistant' },
      orderBy: { id: 'asc' },
    });
  const requestText = (i: number) => JSON.stringify([llm.requests[i]!.system, llm.requests[i]!.messages]);

  it('deadline reminders: one message per recipient per period, by the brain; nobody else, never twice', async () => {
    clock.set(futureTokyo(1, '09:00:10'));
    const today17 = tokyoAt(clock.current, 0, '17:00');
    await task('tanaka-taro', '見積書の送付', today17);
    await task('tanaka-hanako', '出張報告の提出', tokyoAt(clock.current, 1, '12:00'));
    await task('ito-yui', '設計レビュー', today17); // notices_opt_out in the directory
    await task('suzuki-kenji', '来月の予算案', tokyoAt(clock.current, 20, '12:00')); // nothing due soon
    llm.script(
      replyCall('期限の近いタスクのお知らせウル！今日中に片付けるウル🐺'),
      replyCall('明日が期限のタスクがあるウル！準備を進めるウル🐺'),
    );
    await onlySchedule('deadline-reminder', '0 9 * * 1-5');

    const sent = await waitFor(
      async () => {
        const n = await notices();
        return n.length === 2 ? n : null;
      },
      10000,
      'two notices',
    );
    expect(sent.map((m) => m.accountId).sort()).toEqual(['tanaka-hanako', 'tanaka-taro']);
    expect(sent.every((m) => /ウル/.test(m.text))).toBe(true);
    const asked = [requestText(0), requestText(1)];
    expect(asked.some((t) => t.includes('見積書の送付') && t.includes('今日が期限'))).toBe(true);
    expect(asked.some((t) => t.includes('出張報告の提出') && t.includes('明日が期限'))).toBe(true);
    expect(asked.join()).not.toContain('設計レビュー');
    expect(asked.join()).not.toContain('来月の予算案');
    const runs = await svc.db.scheduleRun.findMany({ where: { scheduleId: 'acme:deadline-reminder' } });
    expect(runs).toEqual([
      expect.objectContaining({
        status: 'fired',
        recipients: 2,
        skipped: 0,
        period: tokyoAt(clock.current, 0, '09:00'),
      }),
    ]);
    // A notice's audit record is written right after its message is stored: wait for both records.
    const records = await waitFor(
      async () => {
        const r = await svc.db.turnRecord.findMany({ where: { kind: 'notification' } });
        return r.length === 2 ? r : null;
      },
      5000,
      'two notice records',
    );
    expect(records.map((r) => [r.decision, r.reasonCode, r.finalDecider])).toEqual([
      ['NOTICE', 'P_DEADLINE_REMINDER', 'LLM'],
      ['NOTICE', 'P_DEADLINE_REMINDER', 'LLM'],
    ]);

    // Another tick in the same minute (another instance, a reload) sends nothing more.
    clock.advance(20_000);
    await svc.scheduler!.sweep();
    await new Promise((r) => setTimeout(r, 500));
    expect(await notices()).toHaveLength(2);
    expect(await svc.db.workItem.count({ where: { type: 'notification' } })).toBe(2);
  });

  it('a notice due in quiet hours waits until they end (organisation 21:00-08:00)', async () => {
    clock.set(futureTokyo(2, '22:00:05'));
    await task('tanaka-taro', '夜間バッチの確認', tokyoAt(clock.current, 1, '10:00'));
    const before = await svc.db.workItem.count({ where: { type: 'notification' } });
    await onlySchedule('deadline-reminder', '0 22 * * *');
    const item = await waitFor(
      () =>
        svc.db.workItem.findFirst({
          where: { type: 'notification', dedupeKey: { contains: tokyoAt(clock.current, 0, '22:00').toISOString() } },
        }),
      5000,
      'held item',
    );
    expect(item.runAt).toEqual(tokyoAt(clock.current, 1, '08:00'));
    await new Promise((r) => setTimeout(r, 700));
    expect((await svc.db.workItem.findUniqueOrThrow({ where: { id: item.id } })).state).toBe('queued');
    expect(llm.requests).toHaveLength(0);
    expect(await svc.db.workItem.count({ where: { type: 'notification' } })).toBe(before + 1);
    await svc.db.workItem.delete({ where: { id: item.id } });
  });

  it('a notice the Guardian blocks is not sent, but recorded and counted', async () => {
    clock.set(futureTokyo(3, '09:00:07'));
    await task('tanaka-taro', '評価面談の準備', tokyoAt(clock.current, 0, '18:00'));
    llm.script(replyCall('田中さん、今日は給与の話があるウル'));
    const sentBefore = (await notices()).length;
    await onlySchedule('deadline-reminder', '0 9 * * 1-5');
    const rec = await waitFor(
      () => svc.db.turnRecord.findFirst({ where: { decision: 'NOTICE_BLOCKED' } }),
      8000,
      'blocked record',
    );
    expect(rec).toMatchObject({
      reasonCode: 'G_CONFIDENTIAL',
      guardianAction: 'BLOCK',
      finalReply: null,
      memberId: 'tanaka-taro',
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(await notices()).toHaveLength(sentBefore);
    expect(await (await fetch(`${svc.url}/metrics`)).text()).toMatch(
      /hisho_notices_total\{kind="deadline_reminder",outcome="blocked"\} 1/,
    );
  });

  it('opt-out through the bot: 「朝のまとめはもういらない」 stops the digest for that member, also after an import', async () => {
    llm.script(
      toolCall('set_notice_preference', { kind: 'daily_digest', enabled: false }),
      replyCall('了解ウル、朝のまとめは止めたウル。また欲しくなったら言ってほしいウル🐺'),
    );
    await fetch(`${svc.url}/console/api/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: svc.url },
      body: JSON.stringify({ memberId: 'tanaka-taro', text: '朝のまとめはもういらない', roomId: 'c-optout' }),
    });
    await waitFor(
      () =>
        svc.db.noticePreference.findFirst({ where: { memberId: 'tanaka-taro', kind: 'daily_digest', enabled: false } }),
      8000,
      'preference',
    );
    await waitFor(
      async () => (await svc.db.conversationMessage.count({ where: { roomId: 'c-optout', role: 'assistant' } })) === 1,
      8000,
      'reply',
    );
    const { importDirectoryFile } = await import('../../src/org/import-directory');
    const { SAMPLE_DIRECTORY } = await import('../../src/service');
    await importDirectoryFile(svc.db, SAMPLE_DIRECTORY);
    expect(await svc.db.noticePreference.count({ where: { memberId: 'tanaka-taro', enabled: false } })).toBe(1);

    clock.set(futureTokyo(4, '08:30:03'));
    await task('tanaka-taro', '週報の提出', tokyoAt(clock.current, 0, '17:00'));
    await task('tanaka-hanako', '見積の確認', tokyoAt(clock.current, 0, '17:00'));
    llm.script(replyCall('おはようウル！今日のまとめウル🐺'));
    const before = (await notices()).length;
    await onlySchedule('daily-digest', '30 8 * * 1-5');
    const after = await waitFor(
      async () => {
        const n = await notices();
        return n.length === before + 1 ? n : null;
      },
      8000,
      'one digest',
    );
    expect(after.at(-1)!.accountId).toBe('tanaka-hanako');
    await new Promise((r) => setTimeout(r, 400));
    expect(await notices()).toHaveLength(before + 1);
    expect(llm.requests.map((r) => JSON.stringify(r.messages)).join()).not.toContain('週報の提出');
  });

  it('a digest holds only what its reader may see (the AuthorizationGate applied to the recipient)', async () => {
    clock.set(futureTokyo(0, '08:30:04', 2));
    const yesterday = tokyoAt(clock.current, -1, '17:00');
    const today = tokyoAt(clock.current, 0, '17:00');
    await task('tanaka-hanako', '大阪の見積書', today, 'tanaka-hanako');
    await task('takahashi-ryo', '開発部の極秘リリース計画', today, 'tanaka-hanako'); // given by Hanako to someone outside her scope
    await task('tanaka-taro', '東京の新規提案', yesterday, 'yamada-ichiro'); // another department's work
    await task('watanabe-sho', '渡辺さんの請求書整理', yesterday, 'suzuki-kenji'); // overdue, in Taro's team
    await task('yamada-ichiro', '役員会の資料', yesterday, 'yamada-ichiro'); // the CEO's own work
    await svc.db.member.updateMany({
      where: { orgId: 'acme', id: { notIn: ['tanaka-hanako', 'tanaka-taro'] } },
      data: { noticesOptOut: true },
    });
    try {
      llm.script(replyCall('おはようウル！今日のまとめウル🐺'), replyCall('おはようウル！チームの状況ウル🐺'));
      const started = new Date();
      await onlySchedule('daily-digest', '30 8 * * 1-5');
      const digests = () =>
        svc.db.turnRecord.count({ where: { reasonCode: 'P_DAILY_DIGEST', createdAt: { gte: started } } });
      await waitFor(async () => llm.requests.length === 2 && (await digests()) === 2, 8000, 'two digests');
      const texts = [requestText(0), requestText(1)];
      const hanako = texts.find((t) => t.includes('大阪の見積書'))!;
      const taro = texts.find((t) => t.includes('東京の新規提案'))!;
      expect(hanako).toBeDefined();
      expect(taro).toBeDefined();
      for (const secret of ['開発部の極秘リリース計画', '東京の新規提案', '渡辺さんの請求書整理', '役員会の資料'])
        expect(hanako).not.toContain(secret);
      // Taro (level 3, 東京営業課) sees his own overdue task and his team's, not Hanako's, the developers' or the CEO's.
      expect(taro).toContain('渡辺さんの請求書整理');
      for (const secret of ['大阪の見積書', '開発部の極秘リリース計画', '役員会の資料'])
        expect(taro).not.toContain(secret);
    } finally {
      await svc.db.member.updateMany({ where: { orgId: 'acme' }, data: { noticesOptOut: false } });
      await svc.db.member.update({
        where: { orgId_id: { orgId: 'acme', id: 'ito-yui' } },
        data: { noticesOptOut: true },
      });
    }
  });

  it('weekly goal check-in: members with active goals hear about them with their progress', async () => {
    clock.set(futureTokyo(0, '10:00:06', 3));
    const goal = await svc.db.goal.create({
      data: { orgId: 'acme', memberId: 'suzuki-kenji', title: '新規顧客を5社獲得する' },
    });
    await svc.db.task.createMany({
      data: [
        { orgId: 'acme', title: '訪問リスト作成', assigneeMemberId: 'suzuki-kenji', goalId: goal.id, status: 'done' },
        { orgId: 'acme', title: '提案書の準備', assigneeMemberId: 'suzuki-kenji', goalId: goal.id },
      ],
    });
    llm.script(replyCall('鈴木さん、今週の目標の振り返りウル！進み具合はどうウル？🐺'));
    const before = (await notices()).length;
    await onlySchedule('goal-checkin', '0 10 * * 1');
    const after = await waitFor(
      async () => {
        const n = await notices();
        return n.length === before + 1 ? n : null;
      },
      8000,
      'check-in',
    );
    expect(after.at(-1)!.accountId).toBe('suzuki-kenji');
    const asked = requestText(0);
    expect(asked).toContain('新規顧客を5社獲得する（完了率 50%（1/2））');
    // Its audit record follows the stored message (the CI once read it in between and counted 0).
    const checkins = () => svc.db.turnRecord.count({ where: { reasonCode: 'P_GOAL_CHECKIN' } });
    await waitFor(async () => (await checkins()) > 0, 5000, 'check-in record');
    expect(await checkins()).toBe(1);
    await svc.db.goal.delete({ where: { id: goal.id } });
  });
});
