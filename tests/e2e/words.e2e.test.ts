import fs from 'node:fs';
import path from 'node:path';
import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook, sendTimeNow, toButton } from '../helpers/chatwork';
import { chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

/**
 * Issue 40, the words half, end to end over ChatWork with the sample organisation and a scripted model: the
 * recurrences people ask for come back in the confirmation question in their words, a late 「はい」 is told what
 * ran in the past tense, a reminder is snoozed to the next business day over a weekend, and an assignee moving a
 * due date is told to whoever gave the task. With HISHO_WORDS_TRANSCRIPT=<file> the posts are written there.
 */
const SUZUKI = 1003; // 鈴木健二, level 4, 営業部長
const TANAKA = 1004; // 田中太郎, level 3, 東京営業課
const ITO = 1007; // 伊藤結衣, level 2

describe('the words of issue 40 (end to end, ChatWork)', () => {
  let svc: TestService;
  /** The service's clock: Friday 2026-12-04 17:00 in Tokyo (real time passes on top). */
  const clockOffsetMs = new Date('2026-12-04T08:00:00Z').getTime() - Date.now();
  const now = () => new Date(Date.now() + clockOffsetMs);
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();
  let room = 7900;
  const transcript: string[] = [];

  beforeAll(async () => {
    // One worker: a notice enqueued by a turn is written after that turn's own model calls (scripted in order).
    svc = await startTestService({ ...chatworkEnv(), WORKER_CONCURRENCY: '1' }, { now });
  }, 60000);
  afterAll(async () => {
    await svc.close();
    const out = process.env.HISHO_WORDS_TRANSCRIPT;
    if (out) fs.writeFileSync(path.resolve(out), `${transcript.join('\n')}\n`);
  });
  beforeEach(() => {
    cw.install();
    room++;
  });
  afterEach(() => {
    llm.stop();
  });

  /** Sends a mention as ChatWork does and returns the next post in the room. */
  async function say(from: number, body: string, label: string): Promise<string> {
    const before = cw.posts.length;
    const d = mentionDelivery({ from, room, body: toButton(body), eventTime: sendTimeNow(clockOffsetMs) });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length > before, 8000, `reply to ${body}`);
    const post = cw.posts[before]!.body;
    // Without the reply tag and the outbox's invisible mark (zero-width characters).
    const shown = post.replace(/^\[rp aid=\d+ to=[^\]]+\][^\n]*\n/, '').replace(/[\u200b-\u200d\u2060]/g, '');
    transcript.push(`=== ${label}`, `> ${body}`, shown);
    return post;
  }

  const monthly = (rule: Record<string, unknown>) => ({ freq: 'monthly', time: '09:00', ...rule });
  const asked: [string, Record<string, unknown>, string, string][] = [
    [
      '毎月1日と15日の9時に経費精算の締めをリマインドして',
      monthly({ day: [1, 15] }),
      '・繰り返し: 毎月1日・15日 9:00（土日祝・休業日はお休み）',
      '・初回: 12/15（火）09:00',
    ],
    [
      '第2・第4水曜の10時に定例会議の資料準備をリマインドして',
      monthly({
        nth: [
          { n: 2, weekday: 'wed' },
          { n: 4, weekday: 'wed' },
        ],
        time: '10:00',
      }),
      '・繰り返し: 毎月第2・第4水曜 10:00（土日祝・休業日はお休み）',
      '・初回: 12/9（水）10:00',
    ],
    [
      '隔週月曜の9時に1on1の準備をリマインドして',
      { freq: 'weekly', days: ['mon'], weeks: 2, time: '09:00' },
      '・繰り返し: 隔週月曜 9:00（土日祝・休業日はお休み）',
      '・初回: 12/7（月）09:00',
    ],
    [
      '毎月第3営業日の9時に月次報告の提出をリマインドして',
      monthly({ bday: 3 }),
      '・繰り返し: 毎月第3営業日 9:00',
      '・初回: 2027/1/6（水）09:00',
    ],
    [
      '月末の営業日の17時に請求書の発行をリマインドして',
      monthly({ bday: -1, time: '17:00' }),
      '・繰り返し: 毎月最終営業日 17:00',
      '・初回: 12/28（月）17:00',
    ],
  ];

  it.each(asked)('「%s」 is asked back in those words, with its first run', async (message, rule, repeats, first) => {
    llm.script(toolCall('create_schedule', { kind: 'reminder', rule, text: message.replace(/^.*?に/, '') }));
    const question = await say(SUZUKI, message, `recurrence: ${message}`);
    expect(question).toContain('この定期の予定を登録します。');
    expect(question).toContain(repeats);
    expect(question).toContain(first);
  });

  it('in English the rule is said in English', async () => {
    llm.script(
      toolCall('create_schedule', {
        kind: 'reminder',
        rule: { freq: 'weekly', days: ['mon'], weeks: 2, time: '09:00' },
        text: 'prepare for my 1:1',
      }),
    );
    const question = await say(ITO, 'Remind me every other Monday at 9 to prepare for my 1:1', 'recurrence in English');
    expect(question).toContain('Repeats: Every other Monday at 9:00 (not on weekends, holidays or closing days)');
    expect(question).toContain('First: Mon, Dec 7 09:00');
  });

  it('「はい」 stores it; a second 「はい」 is told what ran, in the past tense', async () => {
    llm.script(
      toolCall('create_schedule', { kind: 'reminder', rule: monthly({ day: [1, 15] }), text: '経費精算の締め' }),
      replyCall('毎月1日と15日の9時に「経費精算の締め」をリマインドするウル🐺'),
    );
    await say(SUZUKI, '毎月1日と15日の9時に経費精算の締めをリマインドして', 'recurrence stored: the question');
    await say(SUZUKI, 'はい', 'recurrence stored: 「はい」');
    const stored = await svc.db.schedule.findFirstOrThrow({ where: { roomId: String(room), source: 'chat' } });
    expect(stored.rule).toMatchObject({ freq: 'monthly', day: [1, 15], time: '09:00' });
    expect(stored.nextRunAt?.toISOString()).toBe('2026-12-15T00:00:00.000Z');
    const late = await say(SUZUKI, 'はい', 'a late 「はい」 to the decided question');
    expect(late).toMatch(/もう実行済みウル: この定期の予定を登録しました（\d\d:\d\dに実行、『経費精算の締め』）。/);
    expect(late).not.toContain('登録します');
  });

  it('「次の営業日にもう一回」 on a Friday evening snoozes the reminder to Monday, same time', async () => {
    // 伊藤's reminder 「週次レポートの提出」 went out here at 17:00.
    const sentAt = new Date('2026-12-04T08:00:00Z');
    const r = await svc.db.reminder.create({
      data: {
        orgId: 'acme',
        platform: 'chatwork',
        roomId: String(room),
        memberId: 'ito-yui',
        text: '週次レポートの提出',
        remindAt: sentAt,
        status: 'sent',
      },
    });
    llm.script(
      toolCall('snooze_reminder', { at: '次の営業日' }),
      replyCall('了解ウル！月曜（12/7）の17:00にもう一度「週次レポートの提出」をお知らせするウル🐺'),
    );
    await say(ITO, '今日はもう無理、次の営業日にもう一回お願い', 'snooze over a weekend');
    const again = await svc.db.reminder.findFirstOrThrow({ where: { snoozedFromId: r.id } });
    expect(again.remindAt.toISOString()).toBe('2026-12-07T08:00:00.000Z');
    transcript.push(`(stored: the reminder comes again at ${again.remindAt.toISOString()} = Monday 12/7 17:00 JST)`);
  });

  it('an assignee moving the due date: whoever gave the task hears it, once, in the persona’s words', async () => {
    const task = await svc.db.task.create({
      data: {
        orgId: 'acme',
        platform: 'chatwork',
        roomId: String(room),
        title: '見積書の作成',
        assigneeMemberId: 'tanaka-taro',
        createdByMemberId: 'suzuki-kenji',
        dueAt: new Date('2026-12-07T14:59:59Z'),
      },
    });
    // The model writes the reply; the notice's model call gets no answer, so the persona's own words are sent.
    llm.script(
      toolCall('change_task', { task_id: task.id, due: '2026-12-09' }),
      replyCall('見積書の作成の期限を12/9（水）に延ばしたウル。鈴木部長にも伝えておくウル🐺'),
    );
    const reply = await say(TANAKA, '見積書の作成、期限を来週水曜にずらします', 'due date moved by the assignee');
    // The reply may say the giver is told: the change really queued that notice.
    expect(reply).toContain('鈴木部長にも伝えておくウル');
    const notice = await waitFor(() => cw.posts.find((p) => p.body.includes('📅')), 10000, 'the giver’s notice');
    transcript.push('--- then, to the giver:', notice.body.replace(/[\u200b-\u200d\u2060]/g, ''));
    expect(notice.body).toContain('[To:1003]');
    expect(notice.body).toContain(
      '鈴木健二さん、田中太郎さんが『見積書の作成』の期限を 12/7（月） → 12/9（水） に変えたウル。',
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(cw.posts.filter((p) => p.body.includes('📅'))).toHaveLength(1);
  });
});
