import { FakeAnthropic, replyCall, type ScriptedAnswer } from '../fakes/fake-anthropic';
import { startTestService, waitFor, type TestService } from '../helpers/service';

/**
 * The console's HTTP side as its page uses it (issue 32): Japanese errors the page can show as they are, the
 * room's `busy` flag (the typing indicator) while a turn is queued or running, and the console identity of a
 * member the directory gave none, created on first use by the platform_accounts writer.
 */
describe('console API: errors, busy, identities', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    llm.stop();
    await svc.close();
  });

  const send = (body: Record<string, unknown>) =>
    fetch(`${svc.url}/console/api/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: svc.url },
      body: JSON.stringify(body),
    });
  const poll = async (room: string) =>
    (await (await fetch(`${svc.url}/console/api/messages?room=${room}&after=0`)).json()) as {
      busy: boolean;
      messages: { role: string; text: string }[];
    };

  it('answers what the page cannot send in Japanese, without field names', async () => {
    const empty = await send({ memberId: 'suzuki-kenji', text: '   ', roomId: 'api-errors' });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({ error: 'メッセージが空です。' });
    const long = await send({ memberId: 'suzuki-kenji', text: 'あ'.repeat(4001), roomId: 'api-errors' });
    expect(await long.json()).toEqual({ error: 'メッセージは4000文字までです。' });
    const nobody = await send({ memberId: 'no-such-member', text: 'こんにちは', roomId: 'api-errors' });
    expect(nobody.status).toBe(404);
    expect(((await nobody.json()) as { error: string }).error).toMatch(/^このメンバーは見つかりません。/);
    const button = await send({ memberId: 'suzuki-kenji', text: '1', roomId: 'api-errors', key: 'h1:nonsense_a0' });
    expect(button.status).toBe(400);
    expect(await button.json()).toEqual({ error: 'このボタンはもう使えません。' });
  });

  it('busy while the turn runs, not after its reply', async () => {
    const room = 'api-busy';
    expect((await poll(room)).busy).toBe(false);
    llm.script({ ...replyCall('はい、聞こえていますウル'), delayMs: 1500 } as ScriptedAnswer);
    expect((await send({ memberId: 'suzuki-kenji', text: '聞こえる？', roomId: room })).status).toBe(202);
    expect((await poll(room)).busy).toBe(true);
    const done = await waitFor(async () => {
      const p = await poll(room);
      return p.messages.some((m) => m.role === 'assistant') ? p : null;
    });
    expect(done.busy).toBe(false);
    // Another room's turn does not make this one busy.
    llm.script({ ...replyCall('別の部屋ウル'), delayMs: 1500 } as ScriptedAnswer);
    await send({ memberId: 'suzuki-kenji', text: 'こんにちは', roomId: 'api-busy-other' });
    expect((await poll(room)).busy).toBe(false);
    expect((await poll('api-busy-other')).busy).toBe(true);
    await waitFor(async () => !(await poll('api-busy-other')).busy);
  });

  it('a member without a console identity gets <org>:<member> on first use', async () => {
    // A database imported before console identities were implicit: the member has none.
    await svc.db.$executeRaw`DELETE FROM platform_accounts WHERE platform = 'console' AND "memberId" = 'takahashi-ryo'`;
    llm.script(replyCall('高橋さん、こんにちはウル'));
    expect((await send({ memberId: 'takahashi-ryo', text: 'こんにちは', roomId: 'api-identity' })).status).toBe(202);
    const account = await svc.db.platformAccount.findMany({
      where: { platform: 'console', memberId: 'takahashi-ryo' },
    });
    expect(account.map((a) => a.accountId)).toEqual(['acme:takahashi-ryo']);
    await waitFor(async () => (await poll('api-identity')).messages.some((m) => m.text.includes('高橋さん')));
  });
});
