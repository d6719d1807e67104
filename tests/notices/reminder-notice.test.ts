import { sqlRunner } from '../../src/db/sql';
import { cancelReminder, createReminder, enqueueDueReminders } from '../../src/scheduler/reminders';
import { says } from '../fakes/fake-brain';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { createTestPipeline, type TestPipeline } from '../helpers/pipeline';

/**
 * A due reminder is written by the brain and sent through the same notice delivery as every proactive message:
 * once, checked by the Guardian, kept in the history and recorded. What the person sees when the written text is
 * blocked, and when they cancel it while it is being written.
 */
describe('a due reminder’s notice', () => {
  let t: TestDatabase;
  let p: TestPipeline;
  let n = 0;

  beforeAll(async () => {
    t = await createTestDatabase();
    p = await createTestPipeline(t);
  });
  afterAll(() => t.close());

  /**
   * A reminder for 田中太郎 in its own console room, due a second before the sweep, with its notice claimed. The sweep
   * runs at 10:00 in Tokyo on a weekday, outside any quiet hours (a sweep at night holds the reminder until morning).
   */
  async function due(text: string) {
    const sweepAt = new Date('2026-11-26T01:00:00Z');
    const roomId = `console-remind-${++n}`;
    const r = await createReminder(t.db, {
      orgId: 'acme',
      platform: 'console',
      roomId,
      memberId: 'tanaka-taro',
      text,
      remindAt: new Date(sweepAt.getTime() - 1000),
      idempotencyKey: null,
    });
    expect(await enqueueDueReminders(sqlRunner(t.db), sweepAt)).toBe(1);
    const item = await p.queue.claim(['notification']);
    expect(item?.payload).toMatchObject({ kind: 'reminder', reminderId: r.id });
    const status = async () => (await t.db.reminder.findUniqueOrThrow({ where: { id: r.id } })).status;
    const posted = () => p.sender.sent.filter((s) => s.roomId === roomId).map((s) => s.text);
    return { r, item: item!, roomId, status, posted };
  }

  it('is written by the brain, mentions its member and is sent once', async () => {
    const { item, status, posted, roomId } = await due('経費精算を出す');
    p.brain.script(says('田中さん、経費精算を出す時間ウル！'));
    await p.notices.handle(item);
    expect(posted()).toEqual(['田中さん、経費精算を出す時間ウル！']);
    expect(p.sender.sent.at(-1)!.mentionAccountIds).toEqual(['tanaka-taro']);
    expect(await status()).toBe('sent');
    const turn = await t.db.turnRecord.findFirstOrThrow({ where: { roomId, kind: 'notification' } });
    expect(turn).toMatchObject({ decision: 'NOTICE', reasonCode: 'P_REMINDER', finalDecider: 'LLM' });
    // The same item again (a retry after a crash): nothing more is posted.
    await p.notices.handle(item);
    expect(posted()).toHaveLength(1);
  });

  it('a text the Guardian blocks is not posted: the person is told it cannot be shown here', async () => {
    const { item, status, posted, roomId } = await due('面談の準備');
    p.brain.script(says('田中さん、来期の給与の面談準備の時間ウル！'));
    await p.notices.handle(item);
    expect(posted()).toHaveLength(1);
    expect(posted()[0]).not.toContain('給与');
    expect(posted()[0]).toContain('機密');
    expect(await status()).toBe('sent');
    const turn = await t.db.turnRecord.findFirstOrThrow({ where: { roomId, kind: 'notification' } });
    expect(turn).toMatchObject({ decision: 'NOTICE_BLOCKED', reasonCode: 'G_CONFIDENTIAL' });
  });

  it('a reminder about payroll work says its own words back (issue 40): 「給与振込データの送信」 is sent', async () => {
    const { item, posted } = await due('給与振込データの送信');
    p.brain.script(says('田中さん、「給与振込データの送信」の時間ウル！'));
    await p.notices.handle(item);
    expect(posted()).toEqual(['田中さん、「給与振込データの送信」の時間ウル！']);
  });

  it('a reminder cancelled while its notice is being written is not sent', async () => {
    const { r, item, status, posted, roomId } = await due('報告書を出す');
    const decide = p.brain.decide.bind(p.brain);
    p.brain.decide = async (input) => {
      expect(await cancelReminder(t.db, r.id)).toBe(true); // the person cancels while the brain writes
      return decide(input);
    };
    try {
      p.brain.script(says('田中さん、報告書の時間ウル！'));
      await p.notices.handle(item);
    } finally {
      p.brain.decide = decide;
    }
    expect(posted()).toEqual([]);
    expect(await status()).toBe('cancelled');
    expect(await t.db.turnRecord.count({ where: { roomId } })).toBe(0);
  });
});
