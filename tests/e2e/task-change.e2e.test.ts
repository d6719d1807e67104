import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook, sendTimeNow, toButton } from '../helpers/chatwork';
import { chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

/**
 * Issue 31, "changing a task", through real turns on ChatWork: 「その件の期限を金曜に延ばして」 about a task the
 * sender gave 田中太郎 is asked first (another person's task), with the dates read by the Guardian on the
 * business calendar; after 「はい」 the change is in the tasks table and mirrored on ChatWork, which cannot edit
 * a task: a new task with the new deadline, then the old one marked done.
 */
describe('changing a task by asking (end to end, ChatWork)', () => {
  let svc: TestService;
  /** The service's clock runs from Tuesday 2026-12-01 09:30 JST (real time passes on top). */
  const clockOffsetMs = new Date('2026-12-01T00:30:00Z').getTime() - Date.now();
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();
  const room = 6301;

  beforeAll(async () => {
    svc = await startTestService(chatworkEnv(), { now: () => new Date(Date.now() + clockOffsetMs) });
  });
  afterAll(async () => {
    await svc.close();
  });
  beforeEach(() => {
    cw.install();
  });
  afterEach(() => {
    llm.stop();
  });

  async function say(from: number, body: string, n: number): Promise<string> {
    const d = mentionDelivery({ from, room, body: toButton(body), eventTime: sendTimeNow(clockOffsetMs) });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length >= n, 8000, `post #${n}`);
    return cw.posts[n - 1]!.body;
  }

  it('「その件の期限を金曜に延ばして」 → confirmation with both dates → はい → new ChatWork task, old one done', async () => {
    // 鈴木 gave 田中太郎 「企画書」 due Monday 11/30 in this room; it was created on ChatWork as task 7001.
    const task = await svc.db.task.create({
      data: {
        orgId: 'acme',
        platform: 'chatwork',
        roomId: String(room),
        title: '企画書',
        assigneeMemberId: 'tanaka-taro',
        createdByMemberId: 'suzuki-kenji',
        dueAt: new Date('2026-11-30T14:59:59Z'),
        chatworkTaskId: '7001',
      },
    });

    llm.script(toolCall('change_task', { task_id: task.id, due: '金曜' }));
    const question = await say(1003, 'その件の期限を金曜に延ばして', 1);
    // The model was shown the task (and its id) among the tasks the sender gave others.
    const request = JSON.stringify(llm.requests[0]!.messages);
    expect(request).toContain(task.id);
    expect(request).toContain('企画書');
    // Another person's task: asked first, stated from the directory and absolute dates, with what ChatWork gets.
    expect(question).toContain('田中太郎さんの『企画書』の期限を11/30（月）→12/4（金）に変更します');
    expect(question).toContain(
      'ChatWork ではタスクを編集できないため、元のタスクを完了にして新しいタスクを作り直します',
    );
    expect(cw.taskCalls).toEqual([]);
    expect((await svc.db.task.findUniqueOrThrow({ where: { id: task.id } })).dueAt?.toISOString()).toBe(
      '2026-11-30T14:59:59.000Z',
    );

    llm.script(
      replyCall(
        '田中太郎さんの『企画書』の期限を12/4（金）に延ばしたウル！ChatWork ではタスクを編集できないので、' +
          '元のタスクを完了にして新しい期限で作り直したウル🐺',
      ),
    );
    const done = await say(1003, 'はい', 2);
    expect(done).toContain('12/4（金）に延ばした');
    expect(done).toContain('作り直した');

    // ChatWork: exactly one new task (田中太郎's account, the new deadline as a date), then the old one done.
    expect(cw.taskCalls).toEqual([`POST /rooms/${room}/tasks`, `PUT /rooms/${room}/tasks/7001/status done`]);
    expect(cw.tasks).toHaveLength(1);
    expect(cw.tasks[0]!.body).toMatchObject({
      to_ids: '1004',
      limit: String(Math.floor(new Date('2026-12-04T23:59:59+09:00').getTime() / 1000)),
      limit_type: 'date',
    });
    expect(cw.tasks[0]!.body.body).toMatch(/^企画書\n（Hisho: 期限 11\/30（月）→12\/4（金）のため作り直したタスクです/);
    const stored = await svc.db.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(stored.dueAt?.toISOString()).toBe('2026-12-04T14:59:59.000Z');
    expect(stored.chatworkTaskId).toBe(cw.tasks[0]!.taskId);
    const turn = await waitFor(
      () => svc.db.turnRecord.findFirst({ where: { roomId: String(room), reasonCode: 'S_USER_APPROVED' } }),
      5000,
      'turn record',
    );
    expect(turn).toMatchObject({ decision: 'EXECUTED', finalDecider: 'USER' });

    // A second 「はい」 runs nothing again: no further ChatWork call, one change recorded.
    await say(1003, 'はい', 3);
    expect(cw.taskCalls).toHaveLength(2);
    expect(await svc.db.taskChange.count({ where: { taskId: task.id } })).toBe(1);
  });
});
