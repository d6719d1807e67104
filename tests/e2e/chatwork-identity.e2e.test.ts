import nock from 'nock';
import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { FakeChatwork, postWebhook, roomMessageDelivery } from '../helpers/chatwork';
import { chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

/** Issue 7 point 7: GET /me failing at start must not leave room webhooks deaf until a restart. */
describe('ChatWork room webhooks when GET /me failed at start', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();
  let meUp = false;
  let meCalls = 0;

  beforeAll(async () => {
    cw.install();
    nock('https://api.chatwork.test')
      .persist()
      .get('/v2/me')
      .reply(() => {
        meCalls++;
        if (!meUp) return [503, { errors: ['Service Unavailable'] }];
        return [200, { account_id: 9999, name: 'Hisho Bot', chatwork_id: 'hisho' }];
      });
    // No bot account given: the service must learn it from GET /me, which is down at first.
    svc = await startTestService(chatworkEnv(), { chatworkBotAccountId: undefined, chatworkMeRetryMs: 50 });
  });
  afterAll(async () => {
    await svc.close();
    llm.stop();
  });

  it('starts without waiting for ChatWork, then takes room mentions once GET /me answers (no restart)', async () => {
    await waitFor(() => meCalls >= 1, 5000, 'first GET /me');
    expect(svc.startupMs).toBeLessThan(3000);
    meUp = true;
    llm.script(toolCall('create_task', { assignee: '田中太郎', title: '週報の提出' }, { overall: 0.6 }));
    const ask = roomMessageDelivery({
      from: 1003,
      room: 7301,
      body: '[To:9999]Hisho Bot\n週報の提出を田中太郎さんにお願い',
    });
    expect((await postWebhook(svc.url, ask.raw, ask.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length === 1, 10000, 'question');
    expect(cw.posts[0]!.body).toMatch(/実行してよい/);

    // The display name from GET /me is recognised after the TO tag even without an honorific.
    llm.script(replyCall('週報の提出をお願いしたウル！🐺'));
    const yes = roomMessageDelivery({ from: 1003, room: 7301, body: '[To:9999]Hisho Bot はい' });
    expect((await postWebhook(svc.url, yes.raw, yes.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length === 2, 8000, 'report');
    expect(await svc.db.task.count({ where: { title: '週報の提出' } })).toBe(1);

    // The bot's own message in the room (echoed by the room webhook) is ignored.
    const own = roomMessageDelivery({ from: 9999, room: 7301, body: '[To:9999]Hisho Bot 自分の発言' });
    expect((await postWebhook(svc.url, own.raw, own.signature)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    expect(cw.posts).toHaveLength(2);
  }, 20000);
});
