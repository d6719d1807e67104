import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { consoleMessage, createTestPipeline, type TestPipeline } from '../helpers/pipeline';
import { proposes, says } from '../fakes/fake-brain';

/** The turn runner top to bottom, with a scripted brain on real PostgreSQL (no service, no HTTP, no workers). */
describe('TurnRunner', () => {
  let t: TestDatabase;
  let p: TestPipeline;
  const turnOf = (workItemId: bigint) => t.db.turnRecord.findFirstOrThrow({ where: { workItemId } });

  beforeAll(async () => {
    t = await createTestDatabase();
    p = await createTestPipeline(t);
  });
  afterAll(() => t.close());

  it('a conversational turn: reply posted once, conversation and turn recorded, item completed', async () => {
    p.brain.script(says('こんにちはウル！今日は何をお手伝いするウル？'));
    const msg = consoleMessage('こんにちは');
    const item = await p.take(msg);

    expect(await p.runner.handleUserRequest(item)).toEqual({ completed: true });

    expect(p.sender.sent.at(-1)).toMatchObject({
      text: 'こんにちはウル！今日は何をお手伝いするウル？',
      kind: 'reply',
      inReplyTo: { platformMessageId: msg.platformMessageId, accountId: 'tanaka-taro' },
    });
    expect(await turnOf(item.id)).toMatchObject({
      decision: 'REPLY',
      reasonCode: 'B_TEXT_RESPONSE',
      finalDecider: 'LLM',
      memberId: 'tanaka-taro',
      model: 'fake-model',
      inputTokens: 100,
    });
    const history = await t.db.conversationMessage.findMany({
      where: { roomId: 'console-general', accountId: 'tanaka-taro' },
      orderBy: { id: 'asc' },
    });
    expect(history.slice(-2).map((m) => [m.role, m.text])).toEqual([
      ['user', 'こんにちは'],
      ['assistant', 'こんにちはウル！今日は何をお手伝いするウル？'],
    ]);
    expect(await t.db.workItem.findUniqueOrThrow({ where: { id: item.id } })).toMatchObject({ state: 'done' });
  });

  it('a retry of a turn whose reply went out neither thinks nor posts again', async () => {
    p.brain.script(says('了解ウル。ほかにもあれば言ってほしいウル🐺'));
    const item = await p.take(consoleMessage('ありがとう'));
    await p.runner.handleUserRequest(item);
    const [posted, asked] = [p.sender.sent.length, p.brain.asked.length];

    await p.runner.handleUserRequest({ ...item, attempts: item.attempts + 1 });

    expect(p.sender.sent).toHaveLength(posted);
    expect(p.brain.asked).toHaveLength(asked);
    expect(await t.db.turnRecord.count({ where: { workItemId: item.id } })).toBe(1);
  });

  it('a stranger is told the bot serves members, without the model or any context', async () => {
    const asked = p.brain.asked.length;
    const item = await p.take(
      consoleMessage('hello', { senderAccountId: 'someone', senderName: 'Someone', roomId: 'dm-1' }),
    );

    await p.runner.handleUserRequest(item);

    expect(p.brain.asked).toHaveLength(asked);
    expect(p.sender.sent.at(-1)!.text).toMatch(/member/i);
    expect(await turnOf(item.id)).toMatchObject({
      decision: 'REFUSED',
      reasonCode: 'Z_STRANGER',
      authResult: 'DENIED',
      memberId: null,
      model: null,
    });
  });

  it('the Gate asks (person scope) while the Guardian allows: both verdicts are recorded as they were', async () => {
    p.brain.script(
      proposes([
        { tool: 'save_memory', params: { kind: 'person', subject: '渡辺翔', content: '朝は電話に出られない' } },
      ]),
    );
    const item = await p.take(consoleMessage('渡辺さんは朝は電話に出られないって覚えて'));

    await p.runner.handleUserRequest(item);

    expect(await turnOf(item.id)).toMatchObject({
      decision: 'CONFIRM',
      reasonCode: 'Z_CONFIRM_PERSON',
      guardianAction: 'ALLOW',
      guardianReason: 'G_OK',
      authResult: 'CONFIRM',
      authReason: 'Z_CONFIRM_PERSON',
    });
    const question = p.sender.sent.at(-1)!;
    expect(question.text).toMatch(/実行してよいウル/);
    const pending = await t.db.pendingAction.findFirstOrThrow({
      where: { accountId: 'tanaka-taro', status: 'pending' },
    });
    expect(question.options?.map((o) => o.answer)).toEqual(['1', '2']);
    expect(question.options?.[0]?.key).toContain(pending.id.replace(/-/g, ''));
    expect(await t.db.memory.count()).toBe(0);
  });

  it('a brain failure is a persona error reply naming the error id; the session counts the error', async () => {
    p.brain.script(Object.assign(new Error('overloaded'), { name: 'APIError' }));
    const sato = { senderAccountId: 'sato-misaki', senderName: '佐藤美咲' };
    const item = await p.take(consoleMessage('明日の予定は？', sato));

    await p.runner.handleUserRequest(item);

    const turn = await turnOf(item.id);
    expect(turn).toMatchObject({ decision: 'ERROR', reasonCode: 'LLM_UNAVAILABLE', errorCategory: 'LLM' });
    expect(p.sender.sent.at(-1)!.text).toContain(turn.errorId!);
    const session = await t.db.conversationState.findFirstOrThrow({ where: { accountId: 'sato-misaki' } });
    expect(session.errorCount).toBeGreaterThanOrEqual(1);
  });
});
