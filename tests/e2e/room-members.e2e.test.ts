import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { chatworkMember, FakeChatwork, mentionDelivery, postWebhook } from '../helpers/chatwork';
import { BOT_ACCOUNT, chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

const GUEST_LINE = '「山本 花子」さん（このルームのメンバー、ディレクトリ未登録）';

describe('ChatWork room members not in the directory (issue 12 §3)', () => {
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
    // Room 5001 (営業部): the bot, two directory members and a guest the directory does not know.
    cw.members.set('5001', [
      chatworkMember(Number(BOT_ACCOUNT), 'Hisho'),
      chatworkMember(1004, '田中 太郎', 'admin'),
      chatworkMember(1003, '鈴木 健二'),
      chatworkMember(2001, '山本 花子', 'readonly'),
    ]);
  });
  afterEach(() => llm.stop());

  const lastUserTurn = (i: number) => JSON.stringify((llm.requests[i] as { messages: unknown[] }).messages.at(-1));

  it('a guest mentioned by name is in the context as a room member, cached per room, with no authority', async () => {
    llm.script(replyCall('山本花子さんはこのルームのメンバーだけど、名簿には載っていないウル🐺'));
    const d = mentionDelivery({ from: 1004, room: 5001, body: '[To:9999]ソウルくん 山本さんって誰だっけ？' });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length === 1, 8000, 'reply');
    const ctx = lastUserTurn(0);
    expect(ctx).toContain(GUEST_LINE);
    expect(ctx).toContain('組織名簿とこのルームのメンバー');
    // Directory members in the list are not repeated as guests, and the bot is not a guest.
    expect(ctx).not.toContain('「田中 太郎」さん');
    expect(ctx).not.toContain('「Hisho」さん');

    // A task for the guest: the AuthorizationGate still treats her as unknown (nothing is created).
    llm.script(
      toolCall('create_task', { assignee: '山本花子', title: '展示会資料の共有', due: '明日' }),
      replyCall('山本花子さんは名簿にいないので、タスクはお願いできないウル。名簿の人なら頼めるウル🐺'),
    );
    const d2 = mentionDelivery({
      from: 1004,
      room: 5001,
      body: '[To:9999]ソウルくん 山本花子さんに展示会資料の共有をお願いして',
    });
    expect((await postWebhook(svc.url, d2.raw, d2.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length === 2, 8000, 'second reply');
    expect(lastUserTurn(1)).toContain(GUEST_LINE);
    const turn = await waitFor(
      () => svc.db.turnRecord.findFirst({ where: { roomId: '5001', inputRedacted: { contains: '展示会資料' } } }),
      5000,
      'turn record',
    );
    expect(turn.decision).not.toBe('EXECUTED');
    expect(await svc.db.task.count({ where: { title: '展示会資料の共有' } })).toBe(0);
    expect(cw.tasks).toHaveLength(0);
    // One read of the member list for both turns (cached per room).
    expect(cw.memberReads.get('5001')).toBe(1);
  });

  it('the members API failing (500) still answers, without room members, and is not hammered', async () => {
    cw.members.set('5003', 500);
    llm.script(replyCall('山本さんが誰かは分からないウル。名簿の名前を教えてほしいウル🐺'), replyCall('了解ウル'));
    const d = mentionDelivery({ from: 1004, room: 5003, body: '[To:9999]ソウルくん 山本さんに連絡した？' });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length === 1, 8000, 'reply');
    expect(cw.posts[0]!.body).toContain('山本さんが誰かは分からないウル');
    expect(lastUserTurn(0)).not.toContain('このルームのメンバー');
    const turn = await waitFor(() => svc.db.turnRecord.findFirst({ where: { roomId: '5003' } }), 5000, 'turn');
    expect(turn.decision).toBe('REPLY');
    // One attempt, no retry on the reply path; the next turn within a minute does not ask again.
    const d2 = mentionDelivery({ from: 1004, room: 5003, body: '[To:9999]ソウルくん ありがとう' });
    await postWebhook(svc.url, d2.raw, d2.signature);
    await waitFor(() => cw.posts.length === 2, 8000, 'second reply');
    expect(cw.memberReads.get('5003')).toBe(1);
  });

  it('a rate-limited members API (429) still answers, without room members, asked once', async () => {
    cw.members.set('5004', 429);
    llm.script(replyCall('山本さんのことは名簿にないウル。名簿の名前で教えてほしいウル🐺'));
    const d = mentionDelivery({ from: 1004, room: 5004, body: '[To:9999]ソウルくん 山本さんに連絡した？' });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length === 1, 8000, 'reply');
    expect(lastUserTurn(0)).not.toContain('このルームのメンバー');
    expect(cw.memberReads.get('5004')).toBe(1);
  });
});
