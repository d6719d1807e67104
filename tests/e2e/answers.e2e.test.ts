import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook, replyButton, toButton } from '../helpers/chatwork';
import { consoleBotMessages, consoleSay } from '../helpers/console';
import { chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

/**
 * Confirmation answers written the way people really write them (issue 7 point 1): ChatWork's TO and 返信
 * buttons put the bot's name after the tag, sometimes a colleague's tag too; on the console people write
 * the bot's name first.
 */
describe('answers as typed (ChatWork buttons, names after the tags)', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();
  let room = 7100;

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

  /** Posts a ChatWork message with this exact body and waits for the bot's `n`-th message. */
  async function send(body: string, n: number, from = 1003): Promise<string> {
    const d = mentionDelivery({ from, room, body });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length >= n, 8000, `post #${n}`);
    return cw.posts[n - 1]!.body;
  }
  const tasks = (title: string) => svc.db.task.count({ where: { title } });
  const pendingHere = () => svc.db.pendingAction.findFirst({ where: { roomId: String(room) } });
  const ask = (title: string) => toolCall('create_task', { assignee: '田中太郎', title }, { overall: 0.6 });

  it.each([
    ['TO button, name with さん and a line break', toButton('はい')],
    ['TO button, a space instead of the line break', toButton('はい', { separator: ' ' })],
    ['TO button, 様 and a full-width space', toButton('はい', { name: 'Hisho様', separator: '\u3000' })],
    ['TO button, "Hisho さん" with a space', toButton('1', { name: 'Hisho さん' })],
    ['TO button, the name without さん', toButton('はい', { name: 'Hisho' })],
    ['TO to the bot and a colleague', `[To:9999]Hishoさん\n[To:1004]田中太郎さん\nはい、お願いします`],
    ['a colleague first, then the bot, on one line', `[To:1004]田中太郎さん[To:9999]Hishoさん\nＯＫ`],
  ])('%s → approved, one task', async (_name, body) => {
    const title = `資料作成-${room}`;
    llm.script(ask(title));
    const q = await send(toButton(`${title}を田中太郎さんにお願い`), 1);
    expect(q).toMatch(/実行してよい/);
    llm.script(replyCall(`${title}をお願いしたウル！ほかにあれば言ってほしいウル🐺`));
    const done = await send(body, 2);
    expect(done).not.toMatch(/確認がまだ/);
    expect(await tasks(title)).toBe(1);
    expect(await pendingHere()).toMatchObject({ status: 'executed' });
    // The model still saw the whole message, name included.
    expect(JSON.stringify(llm.requests[0]!.messages)).toContain('Hishoさん');
  });

  it("ChatWork slow to answer the question's post: 「はい」 sent once it shows in the room → approved", async () => {
    // The question is in the room (people read it) 1.5 s before ChatWork answers the bot's POST; the person's
    // 「はい」 is stamped (whole seconds) within that time. It answers the question all the same.
    const title = `稟議書の回覧-${room}`;
    llm.script(ask(title));
    cw.faults.push({ kind: 'slow', delayMs: 1500 });
    expect(await send(toButton(`${title}を田中太郎さんにお願い`), 1)).toMatch(/実行してよい/);
    llm.script(replyCall(`${title}をお願いしたウル！🐺`));
    const done = await send(toButton('はい'), 2);
    expect(done).not.toMatch(/確認がまだ/);
    expect(await tasks(title)).toBe(1);
  });

  it('the 返信 button on the question → approved; いいえ the same way → cancelled', async () => {
    llm.script(ask('見積書の送付'));
    await send(toButton('見積書の送付を田中太郎さんに'), 1);
    const question = cw.posts[0]!;
    llm.script(replyCall('見積書の送付をお願いしたウル！🐺'));
    await send(replyButton(room, question.messageId, 'はい'), 2);
    expect(await tasks('見積書の送付')).toBe(1);

    llm.script(ask('請求書の確認'));
    await send(toButton('請求書の確認も田中太郎さんに'), 3);
    const cancelled = await send(replyButton(room, cw.posts[2]!.messageId, 'いいえ'), 4);
    expect(cancelled).toMatch(/取りやめた/);
    expect(await tasks('請求書の確認')).toBe(0);
  });

  it('「うーん」 written the ChatWork way → the reminder with 1/2, nothing runs, the action stays', async () => {
    llm.script(ask('議事録の共有'));
    await send(toButton('議事録の共有を田中太郎さんに'), 1);
    const reminder = await send(toButton('うーん'), 2);
    expect(reminder).toMatch(/確認がまだ/);
    expect(reminder).toMatch(/1\. 承認\n2\. キャンセル/);
    expect(await tasks('議事録の共有')).toBe(0);
    expect(await pendingHere()).toMatchObject({ status: 'pending' });
    // The search for create_task and the question: the reminder needed no model call.
    expect(llm.requests).toHaveLength(2);
  });

  it("an answer from someone else, written with the TO button, does nothing to the asker's action", async () => {
    llm.script(ask('会議室の予約'));
    await send(toButton('会議室の予約を田中太郎さんに'), 1);
    llm.script(replyCall('はい、何かお手伝いできることはあるウル？'));
    await send(toButton('はい'), 2, 1001);
    expect(await tasks('会議室の予約')).toBe(0);
    expect(await pendingHere()).toMatchObject({ status: 'pending' });
  });

  it('20 concurrent 「はい」 written with the TO button → exactly one task and no model call for the repeats', async () => {
    llm.script(ask('契約書のレビュー'));
    await send(toButton('契約書のレビューを田中太郎さんに'), 1);
    llm.script(replyCall('契約書のレビューをお願いしたウル！🐺'));
    const deliveries = Array.from({ length: 20 }, () => mentionDelivery({ from: 1003, room, body: toButton('はい') }));
    const post = (d: { raw: string; signature: string }) =>
      postWebhook(svc.url, d.raw, d.signature).then((r) => r.status);
    const statuses = await Promise.all(deliveries.map(post));
    expect(statuses.every((s) => s === 200)).toBe(true);
    // ChatWork allows 10 posts per room in 10 s: the 20 answers take two more windows.
    await waitFor(() => cw.posts.length >= 21, 30000, '20 answers');
    expect(await tasks('契約書のレビュー')).toBe(1);
    expect(cw.tasks.filter((t) => t.body.body?.startsWith('契約書のレビュー'))).toHaveLength(1);
    expect(cw.posts.slice(1).filter((p) => /確認がまだ/.test(p.body))).toHaveLength(0);
    // The search for create_task, the question and one report.
    expect(llm.requests).toHaveLength(3);
  }, 40000);
});

describe("answers as typed (console: the bot's name written first)", () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc.close();
    llm.stop();
  });

  it('「Hisho、はい」 and 「ソウルくん　はい」 approve', async () => {
    const post = (text: string, roomId: string) => consoleSay(svc, 'suzuki-kenji', roomId, text);
    const bot = async (roomId: string) => (await consoleBotMessages(svc, roomId)).length;
    for (const [roomId, answer] of [
      ['c-name-1', 'Hisho、はい'],
      ['c-name-2', 'ソウルくん　はい'],
    ] as const) {
      llm.script(toolCall('create_task', { assignee: '田中太郎', title: `名刺の発注 ${roomId}` }, { overall: 0.6 }));
      await post('名刺の発注を田中太郎さんに', roomId);
      await waitFor(async () => (await bot(roomId)) === 1, 8000, 'question');
      llm.script(replyCall('名刺の発注をお願いしたウル！🐺'));
      await post(answer, roomId);
      await waitFor(async () => (await bot(roomId)) === 2, 8000, 'report');
      expect(await svc.db.task.count({ where: { title: `名刺の発注 ${roomId}` } })).toBe(1);
    }
  });
});
