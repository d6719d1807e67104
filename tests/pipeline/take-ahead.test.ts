import type { BrainDecision, DecideInput } from '../../src/brain/brain';
import { installStatementCounter } from '../../src/db/statement-counter';
import { replyKeyOf, type ClaimedItem } from '../../src/intake/work-queue';
import { proposes, says } from '../fakes/fake-brain';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { consoleMessage, createTestPipeline, type TestPipeline } from '../helpers/pipeline';

/**
 * The reply's outbox row is taken while the turn thinks (issue 10): the take's round trip and the flush of its
 * commit overlap the model request, and the post follows the model's answer without another statement. The take
 * is sent after the model request, which it must not delay.
 */
describe('the outbox take made while the turn thinks', () => {
  let t: TestDatabase;
  let p: TestPipeline;
  const counter = installStatementCounter();
  /** Outbox row updates: the take (a turn's "sent" mark is part of its last statement, a WITH). */
  const takes = () => counter.byShape()['UPDATE outbound_messages'] ?? 0;
  /** Whether the reply's row was taken for `item` while the brain thought (looked at from inside `decide`). */
  let takenWhileThinking: boolean[] = [];
  /** Takes sent when the model request went out. */
  let takesAtRequest: number[] = [];
  let current: ClaimedItem | null = null;

  beforeAll(async () => {
    t = await createTestDatabase();
    p = await createTestPipeline(t);
    const decide = p.brain.decide.bind(p.brain);
    p.brain.decide = async (input: DecideInput): Promise<BrainDecision> => {
      takesAtRequest.push(takes());
      takenWhileThinking.push(await rowTakenWithin(current!, 2000));
      return decide(input);
    };
  });
  afterAll(() => t.close());
  beforeEach(() => {
    takenWhileThinking = [];
    takesAtRequest = [];
    counter.reset();
  });

  async function rowTakenWithin(item: ClaimedItem, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    for (;;) {
      const row = await t.db.outboundMessage.findUnique({ where: { dedupeKey: replyKeyOf(item) } });
      if (row?.claimedBy === item.claimToken) return true;
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('a conversational turn: taken before the model answers, posted without taking again', async () => {
    p.brain.script(says('おはようウル！'));
    current = await p.take(consoleMessage('おはよう'));
    counter.reset();
    expect(await p.runner.handleUserRequest(current)).toEqual({ completed: true });
    expect(takesAtRequest).toEqual([0]);
    expect(takenWhileThinking).toEqual([true]);
    expect(takes()).toBe(1);
    expect(p.sender.sent.at(-1)!.text).toBe('おはようウル！');
    expect(await t.db.outboundMessage.findUnique({ where: { dedupeKey: replyKeyOf(current) } })).toMatchObject({
      status: 'sent',
      claimedBy: current.claimToken,
    });
  });

  it('a one-tool turn: the same, and the task is created once', async () => {
    p.brain.script(
      proposes([{ tool: 'create_task', params: { title: '議事録の清書', assignee: '田中太郎' } }]),
      says('タスクを登録したウル。'),
    );
    current = await p.take(consoleMessage('議事録の清書を自分のタスクにして'));
    const posted = p.sender.sent.length;
    counter.reset();
    await p.runner.handleUserRequest(current);
    expect(takesAtRequest[0]).toBe(0);
    expect(takenWhileThinking[0]).toBe(true);
    expect(takes()).toBe(1);
    expect(p.sender.sent).toHaveLength(posted + 1);
    expect(await t.db.task.count({ where: { title: '議事録の清書' } })).toBe(1);
  });
});
