import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook, toButton } from '../helpers/chatwork';
import { chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

/** Issue 7 point 5: no retry — of an HTTP call or of a turn — posts a second message or creates a second task. */
describe('side effects exactly once across retries (ChatWork)', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();
  let room = 7400;

  beforeAll(async () => {
    svc = await startTestService({ ...chatworkEnv(), CHATWORK_TIMEOUT_MS: '500' }, { outboxReconcileDelayMs: 100 });
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

  async function mention(body: string): Promise<string> {
    const d = mentionDelivery({ from: 1004, room, body: toButton(body) });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    return d.messageId;
  }
  const itemKey = (messageId: string) => `msg:chatwork:${room}:${messageId}`;
  const turnDone = (messageId: string) =>
    waitFor(
      () => svc.db.workItem.findFirst({ where: { dedupeKey: itemKey(messageId), state: 'done' } }),
      10000,
      'work item done',
    );
  const replyRow = (messageId: string) =>
    svc.db.outboundMessage.findUniqueOrThrow({ where: { dedupeKey: `reply:${itemKey(messageId)}` } });

  it.each([
    ['times out after arriving', { kind: 'slow', delayMs: 2000 }],
    ['is answered 502 after arriving', { kind: 'status_after_landing', status: 502 }],
  ] as const)('a reply post that %s → one message, found in the room and recorded as sent', async (_name, fault) => {
    cw.faults.push(fault);
    llm.script(replyCall('こんにちはウル！今日もよろしくウル🐺'));
    const id = await mention('こんにちは');
    const item = await turnDone(id);
    await new Promise((r) => setTimeout(r, 1500));
    expect(cw.posts).toHaveLength(1);
    expect(cw.reads).toBeGreaterThanOrEqual(1);
    expect(await replyRow(id)).toMatchObject({ status: 'sent', platformMessageId: cw.posts[0]!.messageId });
    // Found in the same attempt: the model was asked once and the turn recorded once.
    expect(item.attempts).toBe(1);
    expect(llm.requests).toHaveLength(1);
    expect(await svc.db.turnRecord.count({ where: { roomId: String(room) } })).toBe(1);
  });

  it('a turn retried after its reply failed, its model rewording the title → one task and one answer', async () => {
    cw.faults.push({ kind: 'status', status: 500 });
    llm.script(
      toolCall('create_task', { assignee: '田中太郎', title: '見積書の作成' }),
      replyCall('田中太郎さんに見積書の作成をお願いしたウル！🐺'),
      // The retried turn: the model words the same request differently.
      toolCall('create_task', { assignee: '田中太郎', title: '見積書を作成する' }),
      replyCall('田中太郎さんに見積書をお願いしたウル！🐺'),
    );
    const id = await mention('田中太郎さんに見積書の作成をお願い');
    const item = await turnDone(id);
    expect(item.attempts).toBe(2);
    expect(await svc.db.task.count({ where: { roomId: String(room) } })).toBe(1);
    expect(await svc.db.task.findFirst({ where: { roomId: String(room) } })).toMatchObject({ title: '見積書の作成' });
    expect(cw.tasks).toHaveLength(1);
    expect(cw.posts).toHaveLength(1);
    expect(cw.posts[0]!.body).toContain('見積書をお願いした');
    // Each attempt: the search for create_task, the call, the reply.
    expect(llm.requests).toHaveLength(6);
  });
});
