import type { InboundMessage } from '../../src/core/chat';
import type { ConfirmationStep } from '../../src/turn/confirmation-flow';
import { proposes, says } from '../fakes/fake-brain';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { consoleMessage, createTestPipeline, type TestPipeline } from '../helpers/pipeline';

/** Answers to pending confirmations, as people write them, on real PostgreSQL with a scripted brain. */
describe('ConfirmationFlow', () => {
  let t: TestDatabase;
  let p: TestPipeline;
  let n = 0;

  beforeAll(async () => {
    t = await createTestDatabase();
    p = await createTestPipeline(t);
  });
  afterAll(() => t.close());

  /** 田中太郎's session in a room of its own, fresh for each test (a member works as usual in any room). */
  const who = () => `console-room-${++n}`;

  /** Asks the question through a whole turn (the runner stores the pending action and posts the question). */
  async function asked(roomId: string): Promise<string> {
    p.brain.script(
      proposes([
        { tool: 'save_memory', params: { kind: 'person', subject: '渡辺翔', content: '朝は電話に出られない' } },
      ]),
    );
    await p.runner.handleUserRequest(
      await p.take(consoleMessage('渡辺さんは朝は電話に出られないって覚えて', { roomId })),
    );
    return (await t.db.pendingAction.findFirstOrThrow({ where: { roomId, status: 'pending' } })).id;
  }

  /** The flow's reading of one message in `roomId` (after the question was delivered). */
  async function answer(roomId: string, text: string, over: Partial<InboundMessage> = {}): Promise<ConfirmationStep> {
    const msg = consoleMessage(text, { roomId, ...over });
    const item = await p.take(msg);
    const session = await p.states.getSession({ platform: 'console', roomId, accountId: 'tanaka-taro' });
    const sender = {
      known: true,
      memberId: 'tanaka-taro',
      name: '田中太郎',
      level: 3,
      departmentId: 'sales-tokyo',
      departmentName: null,
      title: null,
      preferences: {},
    };
    const room = { platform: 'console', roomId, name: null, authority: 'member' as const };
    const ctx = await p.contextBuilder.build({ msg, sender, room, now: new Date() });
    try {
      return await p.confirmations.answer({ msg, session, ctx, item });
    } finally {
      await p.queue.complete(item);
    }
  }

  let memoriesBefore = 0;
  const memories = async () =>
    (await t.db.memory.count({ where: { subjectMemberId: 'watanabe-sho' } })) - memoriesBefore;
  beforeEach(async () => {
    memoriesBefore = 0;
    memoriesBefore = await memories();
  });

  it('「はい」 runs it once after the Gate decides again, the brain reports it; a second 「はい」 runs nothing', async () => {
    const account = who();
    const pendingId = await asked(account);
    p.brain.script(says('覚えたウル！ほかにもあれば言ってほしいウル🐺'));

    const yes = await answer(account, 'はい');

    expect(yes).toMatchObject({
      kind: 'decided',
      decision: {
        kind: 'executed',
        reasonCode: 'S_USER_APPROVED',
        decider: 'USER',
        auth: { result: 'CONFIRM' },
        guardian: { action: 'ALLOW', reasonCode: 'G_OK' },
        reply: { text: '覚えたウル！ほかにもあれば言ってほしいウル🐺' },
      },
    });
    expect(p.brain.asked.at(-1)!.purpose).toBe('report_confirmed');
    expect(await memories()).toBe(1);
    expect(await t.db.pendingAction.findUniqueOrThrow({ where: { id: pendingId } })).toMatchObject({
      status: 'executed',
    });

    const again = await answer(account, 'はい');
    expect(again).toMatchObject({ kind: 'decided', decision: { kind: 'ignored', reasonCode: 'S_ALREADY_DECIDED' } });
    expect(await memories()).toBe(1);
  });

  it('「いいえ」 cancels; nothing runs', async () => {
    const account = who();
    const pendingId = await asked(account);

    expect(await answer(account, 'いいえ')).toMatchObject({
      decision: { kind: 'cancelled', reasonCode: 'S_USER_DENIED' },
    });
    expect(await t.db.pendingAction.findUniqueOrThrow({ where: { id: pendingId } })).toMatchObject({
      status: 'cancelled',
    });
    expect(await memories()).toBe(0);
  });

  it("the TO button's addressee is dropped before the answer is read", async () => {
    const account = who();
    await asked(account);
    p.brain.script(says('覚えたウル！'));

    const step = await answer(account, '[To:9999]Hishoさん\nはい', { answerText: 'Hishoさん\nはい' });

    expect(step).toMatchObject({ decision: { kind: 'executed' } });
  });

  it('a 「はい」 sent before the question was delivered is asked again, not counted', async () => {
    const account = who();
    const pendingId = await asked(account);

    const early = await answer(account, 'はい', { sentAt: new Date(Date.now() - 60_000).toISOString() });

    expect(early).toMatchObject({ decision: { kind: 'reminder', reasonCode: 'S_ANSWER_BEFORE_QUESTION' } });
    expect(await t.db.pendingAction.findUniqueOrThrow({ where: { id: pendingId } })).toMatchObject({
      status: 'pending',
    });
  });

  it(
    'anything else is a reminder with buttons; a change request ' + 'continues the turn with the action to change',
    async () => {
      const account = who();
      const pendingId = await asked(account);

      const other = await answer(account, '今日の天気は？');
      expect(other).toMatchObject({ decision: { kind: 'reminder', reasonCode: 'S_PENDING_REMINDER' } });
      expect(other.kind === 'decided' && other.decision.reply.options?.map((o) => o.answer)).toEqual(['1', '2']);

      const change = await answer(account, 'はい、でも内容は「午前中は電話に出られない」にして');
      expect(change).toMatchObject({ kind: 'continue', modifying: { id: pendingId } });
      expect(await t.db.pendingAction.findUniqueOrThrow({ where: { id: pendingId } })).toMatchObject({
        status: 'cancelled',
      });
    },
  );

  it('open() stores nothing when the composed reply is no longer a question (the reply check blocked it)', async () => {
    const msg = consoleMessage('渡辺さんは朝は電話に出られないって覚えて');
    const before = await t.db.pendingAction.count();
    expect(
      await p.confirmations.open(
        {
          kind: 'reply',
          reasonCode: 'B_TEXT_RESPONSE',
          decider: 'LLM',
          calls: [],
          reply: { text: msg.text },
        },
        'ja',
      ),
    ).toMatchObject({ execution: { status: 'not_executed' } });
    expect(await t.db.pendingAction.count()).toBe(before);
  });
});
