import { enqueueDueReminders } from '../../src/scheduler/reminders';
import { sqlRunner } from '../../src/db/sql';
import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { consoleSay } from '../helpers/console';
import { startTestService, waitFor, type TestService } from '../helpers/service';

describe('one-off reminders are delivered (console)', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();

  beforeAll(async () => {
    svc = await startTestService({}, { reminderSweepMs: 100 });
    // Reminders are sent in real time here: no quiet hours, whatever the hour the suite runs at (quiet hours are
    // tested on a fixed clock in chat-schedules.e2e.test.ts and tests/scheduler/reminders.test.ts).
    await svc.db.organization.update({ where: { id: 'acme' }, data: { quietHours: null } });
  });
  afterAll(async () => {
    await svc.close();
  });
  afterEach(() => {
    llm.stop();
  });

  const messages = (room: string) =>
    svc.db.conversationMessage.findMany({
      where: { platform: 'console', roomId: room, role: 'assistant' },
      orderBy: { id: 'asc' },
    });

  it('a reminder asked for in chat is written by the brain at its time and sent once to the person', async () => {
    // Far enough ahead that a loaded machine still reaches the tool before the time passes (a past time is asked
    // about instead of stored).
    const soon = new Date(Date.now() + 6000).toISOString();
    llm.script(
      toolCall('create_reminder', { when: soon, text: '経費精算を出す' }),
      replyCall('了解ウル、時間になったら知らせるウル🐺'),
      replyCall('田中さん、経費精算を出す時間ウル！終わったら教えてほしいウル🐺'),
    );
    await fetch(`${svc.url}/console/api/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: svc.url },
      body: JSON.stringify({
        memberId: 'tanaka-taro',
        text: 'あとで経費精算を出すってリマインドして',
        roomId: 'c-remind',
      }),
    });
    await waitFor(async () => (await messages('c-remind')).length === 1, 8000, 'acknowledgement');
    const reminder = await waitFor(
      () => svc.db.reminder.findFirst({ where: { text: '経費精算を出す' } }),
      5000,
      'reminder row',
    );
    expect(reminder.status).toBe('scheduled');

    const sent = await waitFor(
      async () => {
        const m = await messages('c-remind');
        return m.length === 2 ? m : null;
      },
      20000,
      'reminder notice',
    );
    expect(sent[1]!.text).toContain('経費精算');
    await waitFor(
      async () => (await svc.db.reminder.findUnique({ where: { id: reminder.id } }))?.status === 'sent',
      5000,
      'marked sent',
    );
    const turn = await waitFor(
      () => svc.db.turnRecord.findFirst({ where: { kind: 'notification' } }),
      5000,
      'notice record',
    );
    expect(turn).toMatchObject({
      decision: 'NOTICE',
      reasonCode: 'P_REMINDER',
      finalDecider: 'LLM',
      memberId: 'tanaka-taro',
    });

    // Sweeping again (another instance, a restart) never sends it twice.
    expect(await enqueueDueReminders(sqlRunner(svc.db))).toBe(0);
    await new Promise((r) => setTimeout(r, 400));
    expect(await messages('c-remind')).toHaveLength(2);
  });

  it('a reminder cancelled after the sweep queued its notice is never sent', async () => {
    const room = 'c-remind-cancel';
    await svc.pool.stop(2000);
    const r = await svc.db.reminder.create({
      data: {
        orgId: 'acme',
        platform: 'console',
        roomId: room,
        memberId: 'tanaka-taro',
        text: '報告書を出す',
        remindAt: new Date(Date.now() - 1000),
      },
    });
    const status = async () => (await svc.db.reminder.findUniqueOrThrow({ where: { id: r.id } })).status;
    const notice = { dedupeKey: `reminder:${r.id}` };
    await waitFor(async () => (await status()) === 'queued', 5000, 'queued by the sweep');
    // Its notice waits in the queue behind other work (due again in 2 s) while the person cancels it.
    const later = { runAt: new Date(Date.now() + 2000) };
    const delayed = await svc.db.workItem.updateMany({ where: { ...notice, state: 'queued' }, data: later });
    expect(delayed).toEqual({ count: 1 });
    llm.script(toolCall('cancel_reminder', { reminder_id: r.id }), replyCall('リマインダーを取り消したウル！🐺'));
    svc.pool.start();
    await consoleSay(svc, 'tanaka-taro', room, 'さっきのリマインダーは取り消して');
    await waitFor(async () => (await messages(room)).length === 1, 8000, 'answer');
    const handled = () => svc.db.workItem.findFirst({ where: { ...notice, state: 'done' } });
    await waitFor(handled, 8000, 'notice item handled');
    await new Promise((res) => setTimeout(res, 300));
    expect(await status()).toBe('cancelled');
    expect((await messages(room)).map((m) => m.text)).toEqual(['リマインダーを取り消したウル！🐺']);
    const turn = await waitFor(
      () => svc.db.turnRecord.findFirst({ where: { roomId: room, kind: 'user_request' } }),
      5000,
      'turn',
    );
    expect(JSON.stringify(turn.execution)).toContain('"status":"ok"');
  });
});
