import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook } from '../helpers/chatwork';
import { chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

/**
 * Issue 29, point 1, end to end over ChatWork: a reply never says something happened that did not. The
 * scripted model claims success after each kind of refusal; the room must get the honest text instead.
 */

const TANAKA = 1004; // 田中太郎, level 3
const WATANABE = 1008; // 渡辺翔, level 1 (create_task needs level 2)

const CLAIM = '田中太郎さんに『議事録の清書』のタスクを登録しました！';

describe('replies consistent with the turn (end to end, ChatWork)', () => {
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

  /** Sends a mention as ChatWork does, waits for the answer and the turn record. */
  async function ask(from: number, body: string) {
    const before = cw.posts.length;
    const d = mentionDelivery({ from, room, body: `[To:9999]${body}` });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length > before, 8000, 'reply');
    const turn = await waitFor(
      () =>
        svc.db.turnRecord.findFirst({
          where: { accountId: String(from), inputRedacted: body },
          orderBy: { createdAt: 'desc' },
        }),
      5000,
      'turn record',
    );
    return { turn, post: cw.posts.at(-1)!.body };
  }

  it('DENIED: a level-1 member asks for a task for a colleague; the claimed task is not announced', async () => {
    const honest =
      'ごめんなさいウル、いまの権限ではほかの方のタスクは登録できなかったウル。田中さんご本人か上長の方にお願いしてほしいウル🐺';
    llm.script(
      toolCall('create_task', { assignee: '田中太郎', title: '議事録の清書' }),
      replyCall(CLAIM),
      replyCall(honest),
    );
    const { turn, post } = await ask(WATANABE, '田中さんに議事録の清書のタスクを作って');
    expect(await svc.db.task.count({ where: { title: '議事録の清書' } })).toBe(0);
    expect(post).not.toContain('登録しました');
    expect(post).toContain(honest);
    expect(turn).toMatchObject({ decision: 'DENIED', authResult: 'DENIED', authReason: 'Z_LEVEL_TOO_LOW' });
    expect(turn.finalReply ?? '').not.toContain('登録しました');
  });
});
