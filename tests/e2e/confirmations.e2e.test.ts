import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook, sendTimeNow, toButton } from '../helpers/chatwork';
import { chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

describe('confirmation sessions (end to end, ChatWork)', () => {
  let svc: TestService;
  let clockOffsetMs = 0;
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();
  let room = 6100;

  beforeAll(async () => {
    svc = await startTestService(chatworkEnv(), { now: () => new Date(Date.now() + clockOffsetMs) });
  });
  afterAll(async () => {
    await svc.close();
  });
  beforeEach(() => {
    cw.install();
    room++;
    clockOffsetMs = 0;
  });
  afterEach(() => {
    llm.stop();
  });

  /** Sends a mention written with ChatWork's TO button and waits until the bot has posted `n` messages in total. */
  async function say(from: number, body: string, n: number, r = room): Promise<string> {
    const d = mentionDelivery({ from, room: r, body: toButton(body), eventTime: sendTimeNow(clockOffsetMs) });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length >= n, 8000, `post #${n}`);
    return cw.posts[n - 1]!.body;
  }
  const tasks = (title: string) => svc.db.task.count({ where: { title } });
  const lowConfidenceTask = (title: string, due?: string) =>
    toolCall('create_task', { assignee: '田中太郎', title, ...(due ? { due } : {}) }, { overall: 0.6 });

  it('risky request → confirmation → はい → executed once; a second はい executes nothing', async () => {
    llm.script(lowConfidenceTask('議事録の作成'));
    const q = await say(1003, '田中さん…太郎さんの方に議事録をお願いしたいかも', 1);
    expect(q).toMatch(/実行してよい/);
    expect(q).toMatch(/\[info\]/);
    expect(q).toContain('議事録の作成');
    expect(await tasks('議事録の作成')).toBe(0);

    llm.script(replyCall('田中太郎さんに議事録の作成をお願いしたウル！ほかにあれば言ってほしいウル🐺'));
    const done = await say(1003, 'はい', 2);
    expect(done).toContain('議事録');
    expect(await tasks('議事録の作成')).toBe(1);
    const turn = await waitFor(
      () => svc.db.turnRecord.findFirst({ where: { roomId: String(room), reasonCode: 'S_USER_APPROVED' } }),
      5000,
      'turn record',
    );
    expect(turn).toMatchObject({ decision: 'EXECUTED', finalDecider: 'USER', authResult: 'ALLOWED' });
    const pending = await svc.db.pendingAction.findFirst({ where: { roomId: String(room) } });
    expect(pending).toMatchObject({ status: 'executed' });

    // A second 「はい」 (or the same turn retried) is answered without asking the model, and runs nothing.
    const again = await say(1003, 'はい', 3);
    expect(again).toMatch(/もう実行済みウル: .*議事録の作成/);
    // The search for create_task, the question, the report: nothing more.
    expect(llm.requests).toHaveLength(3);
    expect(await tasks('議事録の作成')).toBe(1);
  });

  it('→ いいえ cancels and nothing runs', async () => {
    llm.script(lowConfidenceTask('在庫の確認'));
    await say(1003, '在庫の確認を田中太郎さんに', 1);
    const reply = await say(1003, 'いいえ', 2);
    expect(reply).toMatch(/取りやめた/);
    expect(await tasks('在庫の確認')).toBe(0);
    expect(await svc.db.pendingAction.findFirst({ where: { roomId: String(room) } })).toMatchObject({
      status: 'cancelled',
    });
  });

  it('→ a late はい (after 10 minutes) gets a polite expiry note and nothing runs', async () => {
    llm.script(lowConfidenceTask('請求書の送付'));
    await say(1003, '請求書の送付を田中太郎さんに', 1);
    clockOffsetMs = 11 * 60 * 1000;
    const reply = await say(1003, 'はい', 2);
    expect(reply).toMatch(/期限が切れ/);
    expect(await tasks('請求書の送付')).toBe(0);
  });

  it('→ 「はい、でも期限は金曜にして」 is a change: re-proposed, confirmed again, executed with the change', async () => {
    llm.script(lowConfidenceTask('提案書の作成', '明日'));
    await say(1003, '提案書の作成を田中太郎さんに、明日まで', 1);
    llm.script(lowConfidenceTask('提案書の作成', '金曜'));
    const again = await say(1003, 'はい、でも期限は金曜にして', 2);
    expect(again).toMatch(/実行してよい/);
    // The model saw the pending action it was asked to change.
    expect(JSON.stringify(llm.requests.at(-1)!.messages)).toContain('変更を求めています');
    expect(await tasks('提案書の作成')).toBe(0);
    llm.script(replyCall('金曜までで、提案書の作成をお願いしたウル！🐺'));
    await say(1003, 'はい', 3);
    const task = await svc.db.task.findFirst({ where: { title: '提案書の作成' } });
    expect(task).not.toBeNull();
    const weekday = new Intl.DateTimeFormat('en-US', { timeZone: 'Asia/Tokyo', weekday: 'short' }).format(task!.dueAt!);
    expect(weekday).toBe('Fri');
    expect(await svc.db.pendingAction.count({ where: { roomId: String(room), status: 'cancelled' } })).toBe(1);
  });

  it('a different request while pending gets a reminder and keeps it; an urgent one cancels it', async () => {
    llm.script(lowConfidenceTask('名刺の発注'));
    await say(1003, '名刺の発注を田中太郎さんに', 1);
    const reminder = await say(1003, '今日の天気は？', 2);
    expect(reminder).toMatch(/確認がまだ/);
    expect(reminder).toContain('名刺の発注');
    expect(await svc.db.pendingAction.findFirst({ where: { roomId: String(room) } })).toMatchObject({
      status: 'pending',
    });
    llm.script(replyCall('了解ウル、止めたウル。ほかに手伝えることはあるウル？'));
    const urgent = await svc.db.pendingAction.count({ where: { roomId: String(room), status: 'pending' } });
    expect(urgent).toBe(1);
    const reply = await say(1003, 'ストップ！緊急で別件', 3);
    expect(reply).toMatch(/取り消した/);
    expect(await svc.db.pendingAction.findFirst({ where: { roomId: String(room) } })).toMatchObject({
      status: 'cancelled',
    });
    expect(await tasks('名刺の発注')).toBe(0);
  });

  it("はい from someone else does nothing to the asker's pending action", async () => {
    llm.script(lowConfidenceTask('会議室の予約'));
    await say(1003, '会議室の予約を田中太郎さんに', 1);
    llm.script(replyCall('はい、何かお手伝いできることはあるウル？'));
    await say(1001, 'はい', 2);
    expect(await tasks('会議室の予約')).toBe(0);
    expect(await svc.db.pendingAction.findFirst({ where: { roomId: String(room) } })).toMatchObject({
      status: 'pending',
    });
  });

  it('a high-risk action needs two confirmations; the second restates the effect; it posts once', async () => {
    llm.script(
      toolCall('announce', { recipients: ['田中太郎', '鈴木健二', '佐藤美咲'], message: '明日の定例は10時からです' }),
    );
    await say(1001, '田中太郎、鈴木、佐藤に明日の定例は10時からって連絡して', 1);
    const second = await say(1001, 'はい', 2);
    expect(second).toMatch(/念のため/);
    expect(second).toContain('3人に送ります');
    expect(cw.posts.filter((p) => p.body.includes('明日の定例は10時から') && !p.body.includes('[info]'))).toHaveLength(
      0,
    );
    llm.script(replyCall('3人に連絡したウル！🐺'));
    await say(1001, 'はい', 4);
    const announcements = cw.posts.filter(
      (p) => p.body.includes('明日の定例は10時からです') && p.body.includes('[To:1004]'),
    );
    expect(announcements).toHaveLength(1);
    expect(announcements[0]!.body).toContain('[To:1003]');
    expect(announcements[0]!.body).not.toContain('[toall]');
  });

  it('20 duplicated approvals in a burst (console) execute the action exactly once', async () => {
    const consoleRoom = `burst-${room}`;
    const post = (text: string) =>
      fetch(`${svc.url}/console/api/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: svc.url },
        body: JSON.stringify({ memberId: 'suzuki-kenji', text, roomId: consoleRoom }),
      });
    const botMessages = () =>
      svc.db.conversationMessage.count({ where: { platform: 'console', roomId: consoleRoom, role: 'assistant' } });
    llm.script(lowConfidenceTask('契約書のレビュー'));
    expect((await post('契約書のレビューを田中太郎さんに')).status).toBe(202);
    await waitFor(async () => (await botMessages()) === 1, 8000, 'confirmation question');
    llm.script(...Array.from({ length: 21 }, () => replyCall('了解ウル！ほかにあれば言ってほしいウル🐺')));
    const statuses = await Promise.all(Array.from({ length: 20 }, () => post('はい').then((r) => r.status)));
    expect(statuses.every((s) => s === 202)).toBe(true);
    await waitFor(async () => (await botMessages()) === 21, 15000, '20 answers');
    expect(await tasks('契約書のレビュー')).toBe(1);
    expect(await svc.db.pendingAction.count({ where: { roomId: consoleRoom, status: 'executed' } })).toBe(1);
    // The search for create_task, the question and the one report: the 19 repeats were answered without the model.
    expect(llm.requests).toHaveLength(3);
  });
});
