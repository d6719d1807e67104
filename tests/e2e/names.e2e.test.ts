import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook } from '../helpers/chatwork';
import { kanjiOnlySampleFile } from '../helpers/directory';
import { chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

/**
 * Issue 33: people are found as they are written. The sample directory has two 田中 with readings
 * (たなか たろう / たなか はなこ) and 田中太郎's romaji "Tanaka Taro"; 鈴木健二 (ChatWork 1003) writes in English.
 */
describe('names as an English speaker writes them (ChatWork)', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();
  let room = 7600;

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

  async function send(body: string, n: number): Promise<string> {
    const d = mentionDelivery({ from: 1003, room, body: `[To:9999]${body}` });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length >= n, 8000, `post #${n}`);
    return cw.posts[n - 1]!.body;
  }

  it('"give Tanaka a task" with two 田中 → the candidates question 「田中さん」 gets, in English, nothing made', async () => {
    llm.script(toolCall('create_task', { assignee: 'Tanaka', title: 'Review the quote' }));
    const q = await send('Please give Tanaka a task to review the quote.', 1);
    expect(q).toContain('There are 2 people called Tanaka. Which one do you mean?');
    expect(q).toContain('田中太郎（東京営業課）');
    expect(q).toContain('田中花子（大阪営業課）');
    expect(await svc.db.task.count({ where: { title: 'Review the quote' } })).toBe(0);
    // The model was shown both in the context: the persons source found them by their readings.
    const context = JSON.stringify(llm.requests[0]!.messages);
    expect(context).toContain('tanaka-taro');
    expect(context).toContain('tanaka-hanako');
  });

  it('"Taro Tanaka" (given name first) is 田中太郎: the task is his', async () => {
    llm.script(
      toolCall('create_task', { assignee: 'Taro Tanaka', title: 'Send the meeting minutes' }),
      replyCall('I asked Taro Tanaka to send the meeting minutes. Anything else?'),
    );
    await send('Ask Taro Tanaka to send the meeting minutes.', 1);
    const task = await waitFor(
      () => svc.db.task.findFirst({ where: { title: 'Send the meeting minutes' } }),
      8000,
      'task',
    );
    expect(task.assigneeMemberId).toBe('tanaka-taro');
  });
});

/**
 * Issue 40: the directory as ChatWork gives it — kanji names only, no readings, romaji or aliases. The import reads
 * the names with the dictionary, so English and kana references find the same people.
 */
describe('names from a kanji-only directory (ChatWork)', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();
  let room = 7650;

  beforeAll(async () => {
    svc = await startTestService({ ...chatworkEnv(), ORG_DIRECTORY_FILE: kanjiOnlySampleFile() });
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

  async function send(body: string): Promise<string> {
    const before = cw.posts.length;
    const d = mentionDelivery({ from: 1003, room, body: `[To:9999]${body}` });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length > before, 8000, 'reply');
    return cw.posts.at(-1)!.body;
  }

  it("the directory has no readings; the import stored the dictionary's", async () => {
    const taro = await svc.db.member.findFirstOrThrow({ where: { id: 'tanaka-taro' } });
    expect(taro).toMatchObject({ name: '田中太郎', reading: null, romaji: null, aliases: [] });
    expect(taro.dictionaryReading).toBe('たなか たろう');
  });

  it('"Tanaka" (English) → the 田中 candidates question', async () => {
    llm.script(toolCall('create_task', { assignee: 'Tanaka', title: 'Review the quote' }));
    const q = await send('Please give Tanaka a task to review the quote.');
    expect(q).toContain('There are 2 people called Tanaka. Which one do you mean?');
    expect(q).toContain('田中太郎（東京営業課）');
    expect(q).toContain('田中花子（大阪営業課）');
    // The context named both for the model (found by the dictionary's readings).
    const context = JSON.stringify(llm.requests[0]!.messages);
    expect(context).toContain('tanaka-taro');
    expect(context).toContain('tanaka-hanako');
  });

  it('「たなかさん」 (Japanese, in kana) → the same question, in Japanese', async () => {
    llm.script(toolCall('create_task', { assignee: 'たなかさん', title: '見積の確認' }));
    const q = await send('たなかさんに見積の確認をお願いして');
    expect(q).toContain('たなかさんが2人います。どちらの方ですか？');
  });

  it('"Taro Tanaka" → 田中太郎: the task is his', async () => {
    llm.script(
      toolCall('create_task', { assignee: 'Taro Tanaka', title: 'Send the minutes' }),
      replyCall('I asked Taro Tanaka to send the minutes.'),
    );
    await send('Ask Taro Tanaka to send the minutes.');
    const task = await waitFor(() => svc.db.task.findFirst({ where: { title: 'Send the minutes' } }), 8000, 'task');
    expect(task.assigneeMemberId).toBe('tanaka-taro');
  });
});
