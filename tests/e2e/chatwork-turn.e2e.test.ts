import nock from 'nock';
import { FakeAnthropic, replyCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook } from '../helpers/chatwork';
import {
  CW_API_TOKEN,
  TEST_API_KEY,
  chatworkEnv,
  startTestService,
  waitFor,
  type TestService,
} from '../helpers/service';

describe('ChatWork mention → brain → threaded reply (end to end)', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();

  beforeAll(async () => {
    svc = await startTestService(chatworkEnv());
  });
  afterAll(async () => {
    await svc.close();
  });
  beforeEach(() => {
    cw.install();
  });

  it('answers a mention in the persona, threaded to the asker, and records the turn', async () => {
    llm.script(
      replyCall('田中さん、こんにちはウル！今日も一緒にがんばるウル🐺 何か手伝えることがあれば言ってほしいウル。'),
    );
    const d = mentionDelivery({ from: 1004, room: 5001, body: '[To:9999]ソウルくん こんにちは！' });
    const res = await postWebhook(svc.url, d.raw, d.signature);
    expect(res.status).toBe(200);
    expect((await res.text()).length).toBeLessThan(2048);

    await waitFor(() => cw.posts.length === 1, 8000, 'reply posted');
    const post = cw.posts[0]!;
    expect(post.roomId).toBe('5001');
    expect(post.token).toBe(CW_API_TOKEN);
    expect(post.body).toContain(`[rp aid=1004 to=5001-${d.messageId}]`);
    expect(post.body).toContain('こんにちはウル');

    const turn = await waitFor(() => svc.db.turnRecord.findFirst({ where: { roomId: '5001' } }), 5000, 'turn record');
    expect(turn).toMatchObject({
      decision: 'REPLY',
      reasonCode: 'B_TEXT_RESPONSE',
      finalDecider: 'LLM',
      outputType: 'text_response',
      memberId: 'tanaka-taro',
    });
    expect(turn.inputTokens).toBeGreaterThan(0);
    expect(Number(turn.costUsd)).toBeGreaterThan(0);
    expect(await svc.db.llmUsage.count({ where: { turnId: turn.id } })).toBe(1);

    // What the model was sent: the stripped message, the stable prefix with a cache breakpoint, no secrets.
    const req = llm.requests.at(-1)!;
    const body = JSON.stringify(req);
    expect(body).toContain('ソウルくん こんにちは！');
    expect(body).not.toContain('[To:9999]');
    for (const secret of [TEST_API_KEY, CW_API_TOKEN, svc.databaseUrl, '0123456789abcdef'])
      expect(body).not.toContain(secret);
    expect(req).not.toHaveProperty('temperature');
    expect((req.system as { cache_control?: unknown }[])[0]!.cache_control).toEqual({ type: 'ephemeral' });
    expect(req.tool_choice).toEqual({ type: 'auto' });
    expect(llm.headers.at(-1)!.authorization).toBe(`Bearer ${TEST_API_KEY}`);
  });

  it('processes concurrent duplicate deliveries of one message once', async () => {
    llm.script(replyCall('一度だけ答えるウル。次は何をするウル？'), replyCall('二度目は来ないはずウル。'));
    const d = mentionDelivery({ from: 1004, room: 5001, body: '[To:9999] 重複テスト' });
    const statuses = await Promise.all(
      Array.from({ length: 5 }, () => postWebhook(svc.url, d.raw, d.signature).then((r) => r.status)),
    );
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    await waitFor(() => cw.posts.length === 1, 8000, 'one reply');
    await new Promise((r) => setTimeout(r, 400));
    expect(cw.posts).toHaveLength(1);
    expect(await svc.db.workItem.count({ where: { dedupeKey: `msg:chatwork:5001:${d.messageId}` } })).toBe(1);
    expect(llm.pending).toBe(1);
    llm.stop();
  });

  it('rejects a bad signature with 401 and stores nothing', async () => {
    const before = await svc.db.workItem.count();
    const d = mentionDelivery({ from: 1004, room: 5001, body: '[To:9999] forged' });
    const res = await postWebhook(svc.url, d.raw, 'AAAA' + d.signature.slice(4));
    expect(res.status).toBe(401);
    // Another spelling of the path goes through express to the same handler (the exact one skips express).
    const slash = await fetch(`${svc.url}/webhooks/chatwork/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-chatworkwebhooksignature': 'AAAA' + d.signature.slice(4) },
      body: d.raw,
    });
    expect(slash.status).toBe(401);
    expect(await svc.db.workItem.count()).toBe(before);
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).toMatch(/hisho_webhook_requests_total\{platform="chatwork",status="401"\} 2/);
    expect(metrics).toMatch(/hisho_turns_total\{kind="user_request",decision="REPLY"\} [1-9]/);
    expect(metrics).toMatch(/hisho_queue_depth\{state="queued"\}/);
    expect(nock.pendingMocks().filter((m) => m.includes('anthropic'))).toEqual([]);
  });
});
