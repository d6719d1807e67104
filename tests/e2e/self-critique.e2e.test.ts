import { FakeAnthropic, replyCall, toolCall, type ScriptedAnswer } from '../fakes/fake-anthropic';
import { startTestService, waitFor, type TestService } from '../helpers/service';

const critique = (input: Record<string, unknown>, hangMs?: number): ScriptedAnswer =>
  hangMs ? { hangMs } : { content: [{ type: 'tool_use', name: 'critique', input }] };

describe('self-critique of sampled turns (R-B6)', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  beforeAll(async () => {
    svc = await startTestService({ SELF_CRITIQUE_RATE: '0.1' });
  });
  afterAll(async () => {
    await svc.close();
  });
  afterEach(() => llm.stop());

  const say = (text: string, roomId: string) =>
    fetch(`${svc.url}/console/api/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: svc.url },
      body: JSON.stringify({ memberId: 'suzuki-kenji', text, roomId }),
    });

  it('runs after the reply, is stored with the turn, raised to admins when it disagrees, changes nothing', async () => {
    llm.script(
      toolCall('create_task', { assignee: '田中太郎', title: '見積書の作成', due: '明日' }, { overall: 0.8 }),
      replyCall('田中太郎さんに「見積書の作成」をお願いしたウル！🐺'),
      critique({
        appropriate: false,
        risk: 'medium',
        concerns: ['期限の確認をせずに作成した'],
        improvement: '期限を確認してから作成するべきだった',
      }),
      replyCall('管理者の皆さん、自己批判が懸念を示したウル。/admin で確認してほしいウル🐺'),
    );
    await say('田中太郎さんに見積書の作成をお願い、明日まで', 'c-critique');
    const turn = await waitFor(() => svc.db.turnRecord.findFirst({ where: { roomId: 'c-critique' } }), 8000, 'turn');
    expect(turn).toMatchObject({ decision: 'EXECUTED', reasonCode: 'T_EXECUTED' });
    const critiqued = await waitFor(
      async () => (await svc.db.turnRecord.findUnique({ where: { id: turn.id } }))?.selfCritique ?? null,
      8000,
      'critique',
    );
    expect(critiqued).toMatchObject({
      reason: 'mid_confidence',
      verdict: 'concern',
      appropriate: false,
      risk: 'medium',
      concerns: ['期限の確認をせずに作成した'],
    });
    // The critique saw the redacted turn, after the reply, as data; the decision and the task stand.
    // (After the turn's three calls: the search for create_task, the call, the reply.)
    const sent = JSON.stringify(llm.requests[3]);
    expect(sent).toContain('見積書の作成');
    expect(sent).toContain('"name":"critique"');
    expect((await svc.db.turnRecord.findUniqueOrThrow({ where: { id: turn.id } })).decision).toBe('EXECUTED');
    expect(await svc.db.task.count({ where: { title: '見積書の作成' } })).toBe(1);
    expect(await svc.db.llmUsage.count({ where: { turnId: turn.id, purpose: 'self_critique' } })).toBe(1);
    await waitFor(() => svc.db.adminAlert.findFirst({ where: { kind: 'self_critique_concern' } }), 5000, 'admin alert');
    // The alert's notice to the admin room is written by the brain (the fourth scripted answer) after the alert row
    // is stored: it is delivered before the next test scripts its answers, or it would take the next test's first.
    await waitFor(
      () => svc.db.workItem.findFirst({ where: { type: 'notification', state: 'done' } }),
      8000,
      'alert notice delivered',
    );
    expect(llm.pending).toBe(0);
    expect(await (await fetch(`${svc.url}/metrics`)).text()).toMatch(
      /hisho_self_critiques_total\{verdict="concern"\} 1/,
    );
  });

  it('a slow critique never delays the reply', async () => {
    llm.script(replyCall('了解ウル！', 0.75), critique({}, 6000));
    const t0 = Date.now();
    await say('ありがとう', 'c-slow');
    await waitFor(
      () => svc.db.conversationMessage.findFirst({ where: { roomId: 'c-slow', role: 'assistant' } }),
      5500,
      'reply',
    );
    // The critique hangs for 6 s: a reply stored before that did not wait for it (the margin absorbs a busy CI).
    expect(Date.now() - t0).toBeLessThan(6000);
    const turn = await svc.db.turnRecord.findFirstOrThrow({ where: { roomId: 'c-slow' } });
    expect(turn.selfCritique).toBeNull();
    // Its 5 s model timeout, then the failed verdict (≈ 5 s after the reply; the wait leaves room for a busy CI).
    const stored = await waitFor(
      async () => (await svc.db.turnRecord.findUnique({ where: { id: turn.id } }))?.selfCritique ?? null,
      15000,
      'failed critique',
    );
    expect(stored).toMatchObject({ reason: 'mid_confidence', verdict: 'failed' });
    expect(turn.decision).toBe('REPLY');
    // Two model calls, the turn's and the critique's, in that order: nothing else took a scripted answer.
    expect(llm.requests).toHaveLength(2);
    expect(JSON.stringify(llm.requests[0])).toContain('ありがとう');
    expect(JSON.stringify(llm.requests[1])).toContain('"name":"critique"');
  }, 30000);
});
