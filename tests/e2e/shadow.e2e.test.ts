import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook } from '../helpers/chatwork';
import { chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

describe('shadow mode (R-F4): think and record, never execute or send', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();
  beforeAll(async () => {
    svc = await startTestService({ ...chatworkEnv(), SHADOW_MODE: 'true' });
  });
  afterAll(async () => {
    await svc.close();
    llm.stop();
  });

  it('allowed, confirm-needing and approved proposals: nothing runs, nothing is posted, everything is recorded', async () => {
    cw.install();
    const say = async (text: string, n: number) => {
      const d = mentionDelivery({ from: 1003, room: 5001, body: `[To:9999]${text}` });
      expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
      await waitFor(async () => (await svc.db.turnRecord.count()) >= n, 8000, `turn ${n}`);
    };
    llm.script(toolCall('create_task', { assignee: '田中太郎', title: 'シャドー1' }), replyCall('作ったウル'));
    await say('田中太郎さんにシャドー1', 1);
    llm.script(toolCall('create_task', { assignee: '田中太郎', title: 'シャドー2' }, { overall: 0.6 }));
    await say('田中太郎さんにシャドー2', 2);
    llm.script(replyCall('はい、なんでしょうウル'));
    await say('はい', 3);
    expect(await svc.db.task.count()).toBe(0);
    expect(cw.tasks).toHaveLength(0);
    expect(cw.posts).toHaveLength(0);
    expect(await svc.db.pendingAction.count()).toBe(0);
    const decisions = (await svc.db.turnRecord.findMany({ orderBy: { createdAt: 'asc' } })).map((t) => t.decision);
    expect(decisions).toHaveLength(3);
    expect(decisions.every((d) => d.startsWith('SHADOW_'))).toBe(true);
    expect(decisions).toContain('SHADOW_CONFIRM');
  });
});
