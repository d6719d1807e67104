import { FakeAnthropic, replyCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook } from '../helpers/chatwork';
import { chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

/**
 * SPEC §5 "an item that gives up is visible (failed, listed, alerted), never silent" (issue 29 point 6): a work
 * item that gives up ends failed with an error id, is listed in /admin, raises `work_abandoned`, and the person is
 * told once, in the persona's words, with that error id — without a duplicate when the reply may have arrived,
 * and without an apology for an apology that could not be posted.
 */
describe('no silent ends', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();
  let room = 7300;

  beforeAll(async () => {
    svc = await startTestService(
      { ...chatworkEnv(), CHATWORK_TIMEOUT_MS: '1000', ADMIN_TOKEN },
      { outboxReconcileDelayMs: 50 },
    );
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
    const d = mentionDelivery({ from: 1004, room, body: `[To:9999]${body}` });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    return `msg:chatwork:${room}:${d.messageId}`;
  }
  const failed = (dedupeKey: string) =>
    waitFor(() => svc.db.workItem.findFirst({ where: { dedupeKey, state: 'failed' } }), 40000, `${dedupeKey} failed`);
  async function adminFailed(): Promise<Record<string, unknown>[]> {
    const res = await fetch(`${svc.url}/admin/api/failed`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { failed: Record<string, unknown>[] }).failed;
  }
  /** The `work_abandoned` alert names this error id, or (a later one in the same window) counted it as a repeat. */
  async function alerted(errorId: string, repeatsBefore: number): Promise<void> {
    const alert = await waitFor(
      () => svc.db.adminAlert.findFirst({ where: { kind: 'work_abandoned' }, orderBy: { createdAt: 'desc' } }),
      5000,
      'work_abandoned alert',
    );
    const facts = alert.facts as Record<string, unknown>;
    if (facts.errorId !== errorId) expect(alert.repeats).toBeGreaterThan(repeatsBefore);
  }
  const repeats = async () =>
    (await svc.db.adminAlert.findFirst({ where: { kind: 'work_abandoned' }, orderBy: { createdAt: 'desc' } }))
      ?.repeats ?? -1;

  it(
    'a reply whose post timed out and whose look-up fails three times: failed, listed, alerted, and the person ' +
      'is told once that the reply may not have arrived (no second copy of the reply)',
    async () => {
      const before = await repeats();
      // The reply lands but its answer comes after the client's timeout; the room's messages cannot be read.
      cw.faults.push({ kind: 'slow', delayMs: 2500 });
      cw.readStatus = 500;
      llm.script(replyCall('明日の会議は10時からウル🐺'));
      const key = await mention('明日の会議は何時？');
      const item = await failed(key);
      expect(item.errorId).toMatch(/^E-[A-Z0-9]{7}$/);
      expect(item.attempts).toBe(3);
      const errorId = item.errorId!;

      const apology = await waitFor(() => cw.posts.find((p) => p.body.includes(errorId)), 20000, 'apology');
      expect(apology.body).toContain('お返事が届いていないかもしれない');
      expect(apology.body.startsWith('[rp aid=1004 to=')).toBe(true);
      // At least three look-ups failed: the turn's own after the timeout, and one by each retry.
      expect(cw.reads).toBeGreaterThanOrEqual(3);
      await new Promise((r) => setTimeout(r, 500));
      expect(cw.posts.filter((p) => p.body.includes(errorId))).toHaveLength(1);
      // The reply itself was posted once (it landed), never again.
      expect(cw.posts.filter((p) => p.body.includes('10時から'))).toHaveLength(1);
      expect(cw.posts).toHaveLength(2);

      const listed = (await adminFailed()).find((f) => f.errorId === errorId);
      expect(listed).toMatchObject({ what: '会話への返答', room: `chatwork:${room}`, told: '送信済み', attempts: 3 });
      expect(JSON.stringify(listed)).not.toMatch(/EXTERNAL_API_FAILED|uncertain|timed out/);
      await alerted(errorId, before);
    },
    60000,
  );

  it('a turn that exhausts its attempts: failed, listed, alerted, the persona apology with its error id', async () => {
    const before = await repeats();
    // The bot was removed from the room for a while: every attempt's post is refused (nothing lands).
    cw.faults.push({ kind: 'status', status: 403 }, { kind: 'status', status: 403 }, { kind: 'status', status: 403 });
    llm.script(replyCall('了解ウル'), replyCall('了解ウル'), replyCall('了解ウル'));
    const key = await mention('今日の予定は？');
    const item = await failed(key);
    const errorId = item.errorId!;
    expect(errorId).toMatch(/^E-[A-Z0-9]{7}$/);
    const apology = await waitFor(() => cw.posts.find((p) => p.body.includes(errorId)), 20000, 'apology');
    expect(apology.body).toMatch(/ごめんなさいウル/);
    expect(apology.body).not.toMatch(/403|EXTERNAL_API_FAILED/);
    await new Promise((r) => setTimeout(r, 500));
    expect(cw.posts).toHaveLength(1);
    const listed = (await adminFailed()).find((f) => f.errorId === errorId);
    expect(listed).toMatchObject({ what: '会話への返答', told: '送信済み', attempts: 3 });
    expect(listed!.cause).toMatch(/連携先サービス/);
    await alerted(errorId, before);
  }, 60000);

  it('an apology that cannot be posted either ends failed, listed, with no apology for it (no loop)', async () => {
    for (let i = 0; i < 8; i++) cw.faults.push({ kind: 'status', status: 403 });
    llm.script(replyCall('了解ウル'), replyCall('了解ウル'), replyCall('了解ウル'));
    const key = await mention('聞こえる？');
    const turn = await failed(key);
    const apology = await failed(`apology:${key}`);
    expect(apology.errorId).toMatch(/^E-/);
    await new Promise((r) => setTimeout(r, 1500));
    // Three posts of the reply, three of the apology; nothing after that.
    expect(cw.faults).toHaveLength(2);
    expect(await svc.db.workItem.count({ where: { dedupeKey: { startsWith: `apology:apology:` } } })).toBe(0);
    const list = await adminFailed();
    expect(list.find((f) => f.errorId === turn.errorId)).toMatchObject({ what: '会話への返答', told: '未送信' });
    expect(list.find((f) => f.errorId === apology.errorId)).toMatchObject({ what: 'お詫びの連絡', told: '対象外' });
  }, 60000);
});
