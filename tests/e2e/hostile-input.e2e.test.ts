import { FakeAnthropic, replyCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook } from '../helpers/chatwork';
import { CW_WEBHOOK_TOKEN, chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';
import { chatworkSignature } from '../../src/adapters/chatwork';

/** Found by `npm run proof` (fuzz): validly signed deliveries whose text PostgreSQL cannot store as sent. */
describe('hostile but validly signed webhook content (real PostgreSQL)', () => {
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
  afterEach(() => {
    llm.stop();
  });

  it('stores and answers once a mention with NUL characters, lone surrogates and a BOM in its text', async () => {
    llm.script(replyCall('受け取ったウル！内容を確認するウル。ほかにあれば言ってほしいウル🐺'));
    const d = mentionDelivery({
      from: 1004,
      room: 5001,
      body: '[To:9999]Hishoさん\n見積\u0000書の件\ud800です\ufeff。\udfffよろしく',
    });
    const res = await postWebhook(svc.url, d.raw, d.signature);
    expect(res.status).toBe(200);
    await waitFor(() => cw.posts.length === 1, 8000, 'one reply');
    await new Promise((r) => setTimeout(r, 700));
    expect(cw.posts).toHaveLength(1);
    expect(cw.posts[0]!.body).toContain(`[rp aid=1004 to=5001-${d.messageId}]`);
    // The model saw the text with the unstorable characters replaced, not dropped as a whole.
    expect(JSON.stringify(llm.requests[0])).toContain('見積書の件\ufffdです');
    const item = await svc.db.workItem.findFirst({ where: { dedupeKey: `msg:chatwork:5001:${d.messageId}` } });
    expect(item?.state).toBe('done');
  });

  it('refuses a delivery whose message id is far longer than any ChatWork id with 400, storing nothing', async () => {
    const d = mentionDelivery({ from: 1004, room: 5001, body: '[To:9999] 長いid', messageId: '9'.repeat(300_000) });
    const res = await postWebhook(svc.url, d.raw, d.signature);
    expect(res.status).toBe(400);
    expect(
      await svc.db.workItem.count({
        where: { type: 'user_request', dedupeKey: { startsWith: 'msg:chatwork:5001:999' } },
      }),
    ).toBe(0);
  });

  it('answers an intake failure with 503 and an error id the operator can look up in the logs', async () => {
    // A payload the database rejects for a reason the adapter cannot fix: the server is gone.
    const raw = JSON.stringify({
      webhook_setting_id: '1',
      webhook_event_type: 'mention_to_me',
      webhook_event_time: Math.floor(Date.now() / 1000),
      webhook_event: {
        from_account_id: 1004,
        to_account_id: 9999,
        room_id: 5001,
        message_id: '77001',
        body: '[To:9999] 落ちてる？',
        send_time: Math.floor(Date.now() / 1000),
        update_time: 0,
      },
    });
    await svc.db.$executeRawUnsafe('ALTER TABLE work_items RENAME TO work_items_away');
    try {
      const res = await postWebhook(svc.url, raw, chatworkSignature(raw, CW_WEBHOOK_TOKEN));
      expect(res.status).toBe(503);
      expect(await res.text()).toMatch(/E-[A-Z0-9]{7}/);
    } finally {
      await svc.db.$executeRawUnsafe('ALTER TABLE work_items_away RENAME TO work_items');
    }
  });
});
