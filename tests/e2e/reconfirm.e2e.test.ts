import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook, toButton } from '../helpers/chatwork';
import { consoleBotMessages, consoleSay } from '../helpers/console';
import { chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

const TZ = 'Asia/Tokyo';

/** The calendar date `days` from today in Tokyo: ISO (what the model proposes) and as people read it. */
function day(days: number): { iso: string; shown: string } {
  const at = new Date(Date.now() + days * 86_400_000);
  const part = (o: Intl.DateTimeFormatOptions) => new Intl.DateTimeFormat('en-US', { timeZone: TZ, ...o }).format(at);
  const [y, m, d] = [part({ year: 'numeric' }), part({ month: 'numeric' }), part({ day: 'numeric' })];
  const weekday = '日月火水木金土'['SunMonTueWedThuFriSat'.indexOf(part({ weekday: 'short' })) / 3];
  const thisYear = new Intl.DateTimeFormat('en-US', { timeZone: TZ, year: 'numeric' }).format(new Date()) === y;
  const iso = `${y}-${m.padStart(2, '0')}-${d.padStart(2, '0')}`;
  return { iso, shown: `${thisYear ? '' : `${y}/`}${m}/${d}（${weekday}）` };
}

/**
 * Issue 7 points 2–4: the question states the checked call, a change is always asked again with a diff,
 * and an answer counts only for the round whose question it answers.
 */
describe('confirmation questions (ChatWork)', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();
  let room = 7200;

  beforeAll(async () => {
    svc = await startTestService(chatworkEnv());
  });
  afterAll(async () => {
    await svc.close();
  });
  beforeEach(() => {
    cw.install();
    room++;
  });
  afterEach(() => {
    llm.stop();
  });

  async function send(body: string, n: number, sendTime?: number): Promise<string> {
    const d = mentionDelivery({ from: 1003, room, body: toButton(body), sendTime });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length >= n, 8000, `post #${n}`);
    return cw.posts[n - 1]!.body;
  }
  const tasks = (title: string) => svc.db.task.findMany({ where: { title } });

  it("states the checked call — directory name, absolute date — not the model's own summary", async () => {
    const due = day(1);
    // The model's summary names the wrong person; the question states who the directory says.
    llm.script({
      content: [
        {
          type: 'tool_use',
          name: 'create_task',
          input: {
            reasoning: 'Asks to give Taro the minutes task by tomorrow: create_task.',
            confidence: 0.6,
            summary: '鈴木さんに議事録をお願いします',
            parameters: { assignee: '太郎さん', title: '議事録の作成', due: due.iso },
            sources: {},
          },
        },
      ],
    });
    const q = await send('太郎さんに議事録、明日までで', 1);
    expect(q).toContain('田中太郎さんにタスクを作成します');
    expect(q).toContain('・担当: 田中太郎（東京営業課）');
    expect(q).toContain('・内容: 議事録の作成');
    expect(q).toContain(`・期限: ${due.shown}`);
    expect(q).toContain('・ChatWork: ChatWork のタスクにも登録します');
    // The model's summary may follow, marked as such, after the facts.
    expect(q.indexOf('（ご依頼の要約: 鈴木さんに議事録をお願いします）')).toBeGreaterThan(q.indexOf('・期限'));
    expect(q).toMatch(/実行してよいウル/);
  });

  it('an ambiguous or unknown person is asked about before any confirmation; nothing is pending', async () => {
    llm.script(toolCall('create_task', { assignee: '田中', title: '名簿の整理' }, { overall: 0.6 }));
    const q = await send('田中さんに名簿の整理を', 1);
    expect(q).toContain('田中さんが2人います');
    expect(q).toContain('田中太郎（東京営業課）');
    expect(q).toContain('田中花子（大阪営業課）');
    expect(await svc.db.pendingAction.count({ where: { roomId: String(room) } })).toBe(0);
  });

  it('modify → asked again with the diff, even if the Guardian would allow it → approve → one task', async () => {
    const [before, after] = [day(1), day(4)];
    llm.script(
      toolCall('create_task', { assignee: '田中太郎', title: '提案書の作成', due: before.iso }, { overall: 0.6 }),
    );
    await send('提案書の作成を田中太郎さんに、明日まで', 1);

    // The changed call has high confidence: the Guardian alone would run it at once.
    llm.script(
      toolCall('create_task', { assignee: '田中太郎', title: '提案書の作成', due: after.iso }, { overall: 0.95 }),
    );
    const again = await send('はい、でも期限は金曜にして', 2);
    expect(again).toContain('【変更点】');
    expect(again).toContain(`期限: ${before.shown} → ${after.shown}`);
    expect(again).not.toContain('担当: 田中太郎（東京営業課） →');
    expect(again).toMatch(/実行してよいウル/);
    expect(await tasks('提案書の作成')).toHaveLength(0);
    expect(cw.tasks).toHaveLength(0);
    const reconfirmed = { roomId: String(room), reasonCode: 'S_CHANGE_RECONFIRM' };
    const turn = await waitFor(() => svc.db.turnRecord.findFirst({ where: reconfirmed }), 5000, 'reconfirm turn');
    // Asked again because it is a change: the Guardian's real verdict (it would allow) is what is recorded.
    expect(turn).toMatchObject({ decision: 'CONFIRM', guardianAction: 'ALLOW', guardianReason: 'G_OK' });

    llm.script(replyCall('期限を変えて、提案書の作成をお願いしたウル！🐺'));
    await send('はい', 3);
    const created = await tasks('提案書の作成');
    expect(created).toHaveLength(1);
    expect(new Intl.DateTimeFormat('en-CA', { timeZone: TZ }).format(created[0]!.dueAt!)).toBe(after.iso);
    const order = { createdAt: 'asc' as const };
    const where = { roomId: String(room) };
    expect(await svc.db.pendingAction.findMany({ where, orderBy: order, select: { status: true } })).toEqual([
      { status: 'cancelled' },
      { status: 'executed' },
    ]);
  });

  it('a change the Guardian blocks is not asked, and nothing runs', async () => {
    llm.script(toolCall('create_task', { assignee: '田中太郎', title: '資料の準備' }, { overall: 0.6 }));
    await send('資料の準備を田中太郎さんに', 1);
    llm.script(
      toolCall('create_task', { assignee: '田中太郎', title: '給与明細の準備' }, { overall: 0.95 }),
      replyCall('ごめんなさいウル、その内容はお手伝いできないウル。ほかの内容なら言ってほしいウル🐺'),
    );
    const reply = await send('はい、でも給与明細の準備にして', 2);
    expect(reply).not.toMatch(/実行してよい/);
    expect(await svc.db.task.count({ where: { roomId: String(room) } })).toBe(0);
    expect(await svc.db.pendingAction.count({ where: { roomId: String(room), status: 'pending' } })).toBe(0);
  });

  it('two quick 「はい」 sent before the second question was shown never pass both rounds (high risk)', async () => {
    llm.script(
      toolCall('announce', { recipients: ['田中太郎', '鈴木健二', '佐藤美咲'], message: '本日の定例は中止です' }),
    );
    const q = await send('3人に本日の定例は中止と連絡して', 1);
    expect(q).toContain('・宛先: 3人（田中太郎、鈴木健二、佐藤美咲）');
    expect(q).toContain('・本文: 本日の定例は中止です');
    // The person reads the question (ChatWork times messages in whole seconds: wait for the next one), then
    // sends 「はい」 twice in quick succession — both before the bot could ask the second question.
    await new Promise((r) => setTimeout(r, 1010 - (Date.now() % 1000)));
    const sentAt = Math.floor(Date.now() / 1000);
    const first = mentionDelivery({ from: 1003, room, body: toButton('はい'), sendTime: sentAt });
    const second = mentionDelivery({ from: 1003, room, body: toButton('はい'), sendTime: sentAt });
    await postWebhook(svc.url, first.raw, first.signature);
    await postWebhook(svc.url, second.raw, second.signature);
    await waitFor(() => cw.posts.length >= 3, 8000, 'two answers');
    expect(cw.posts[1]!.body).toMatch(/念のため/);
    expect(cw.posts[2]!.body).toMatch(/念のため/);
    expect(cw.posts.filter((p) => p.body.includes('本日の定例は中止です') && !p.body.includes('[info]'))).toHaveLength(
      0,
    );
    expect(await svc.db.pendingAction.findFirst({ where: { roomId: String(room) } })).toMatchObject({
      status: 'pending',
      confirmationsGiven: 1,
    });

    // A 「はい」 after reading the second question runs it, once.
    llm.script(replyCall('3人に連絡したウル！🐺'));
    await send('はい', 5);
    const announcements = cw.posts.filter(
      (p) => p.body.includes('本日の定例は中止です') && p.body.includes('[To:1004]'),
    );
    expect(announcements).toHaveLength(1);
  });
});

describe('confirmation buttons bound to their round (console)', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.close();
    llm.stop();
  });

  it("a double click on the first 承認 asks once more; the second question's button runs it once", async () => {
    const roomId = 'c-double';
    const post = (text: string, key?: string) => consoleSay(svc, 'yamada-ichiro', roomId, text, key);
    const bot = () => consoleBotMessages(svc, roomId);
    llm.script(toolCall('announce', { recipients: 'all', message: '来週から新しい勤怠システムです' }));
    await post('全員に来週から新しい勤怠システムと伝えて');
    const botCount = (n: number) => async () => {
      const m = await bot();
      return m.length === n ? m : null;
    };
    const [question] = await waitFor(botCount(1), 8000, 'question');
    const yes = (question!.options as { answer: string; key: string }[]).find((o) => o.answer === '1')!;
    expect(yes.key).toMatch(/_a0$/);

    // Double click: two clicks of the same first-round button. One counts; the other page is told privately.
    const clicks = await Promise.all([post('1', yes.key), post('1', yes.key)]);
    expect(clicks.map((r) => r.status).sort()).toEqual([200, 202]);
    const told = (await clicks.find((r) => r.status === 200)!.json()) as { note: string };
    expect(told.note).toMatch(/念のための確認/);
    const msgs = await waitFor(botCount(2), 8000, 'second question');
    expect(msgs[1]!.text).toMatch(/念のため/);
    expect(msgs.some((m) => m.text === '来週から新しい勤怠システムです')).toBe(false);

    const second = (msgs[1]!.options as { answer: string; key: string }[]).find((o) => o.answer === '1')!;
    expect(second.key).toMatch(/_a1$/);
    llm.script(replyCall('全員に伝えたウル！🐺'));
    await post('1', second.key);
    const done = await waitFor(botCount(4), 8000, 'announcement and report');
    expect(done.filter((m) => m.text === '来週から新しい勤怠システムです')).toHaveLength(1);
    expect(await svc.db.pendingAction.findFirst({ where: { roomId } })).toMatchObject({ status: 'executed' });
  });
});
