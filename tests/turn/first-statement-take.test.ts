import type { InboundMessage } from '../../src/core/chat';
import type { BrainDecision, DecideInput } from '../../src/brain/brain';
import type { Sql } from '../../src/db/sql';
import { installStatementCounter } from '../../src/db/statement-counter';
import { ClaimLostError, replyKeyOf, type ClaimedItem } from '../../src/queue/work-queue';
import { proposes, says } from '../fakes/fake-brain';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { consoleMessage, createTestPipeline, type TestPipeline } from '../helpers/pipeline';

/**
 * The post needs no statement of its own to take the reply's outbox row (issue 10). The turn's first statement
 * takes it for the turn's claim as it reserves it (the post relies on it). A row that already existed (a retry) is
 * taken by the post itself. (A take made while the model thought was removed: no gain measured, decision 0004.)
 */
describe('the outbox take made before the post', () => {
  let t: TestDatabase;
  let p: TestPipeline;
  const counter = installStatementCounter();
  /** Outbox row updates: the take (a turn's "sent" mark is part of its last statement, a WITH). */
  const takes = () => counter.byShape()['UPDATE outbound_messages'] ?? 0;
  /** How many first statements (the ones that reserve the reply's row: `taken_left_ms`) each turn sent. */
  let firstStatements = 0;
  const watch =
    (sql: Sql): Sql =>
    async <T>(text: string, params?: unknown[]) => {
      const rows = await sql<T>(text, params);
      const first = rows[0] as { taken_left_ms?: unknown } | undefined;
      if (first && 'taken_left_ms' in first) firstStatements += 1;
      return rows;
    };
  /** Whether the reply's row was taken for `item` while the brain thought (looked at from inside `decide`). */
  let takenWhileThinking: boolean[] = [];
  /** Takes sent when the model request went out. */
  let takesAtRequest: number[] = [];
  let current: ClaimedItem | null = null;

  beforeAll(async () => {
    t = await createTestDatabase();
    p = await createTestPipeline(t, {}, { wrapSql: watch });
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
    firstStatements = 0;
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

  it('a conversational turn: taken by its first statement; no take', async () => {
    p.brain.script(says('おはようウル！'));
    current = await p.take(consoleMessage('おはよう'));
    counter.reset();
    expect(await p.runner.handleUserRequest(current)).toEqual({ completed: true });
    expect(takenWhileThinking).toEqual([true]);
    expect(firstStatements).toBe(1);
    expect(takes()).toBe(0);
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
    expect(takenWhileThinking[0]).toBe(true);
    expect(firstStatements).toBe(1);
    expect(takes()).toBe(0);
    expect(p.sender.sent).toHaveLength(posted + 1);
    expect(await t.db.task.count({ where: { title: '議事録の清書' } })).toBe(1);
  });

  it('a row an earlier attempt reserved: taken by the post, after the model answered; posted', async () => {
    const msg: InboundMessage = consoleMessage('こんばんは');
    current = await p.take(msg);
    // An earlier attempt reserved the reply and stopped before anything took it (nothing can have been posted).
    await t.db.outboundMessage.create({
      data: { dedupeKey: replyKeyOf(current), platform: 'console', roomId: msg.roomId, body: '', status: 'sending' },
    });
    p.brain.script(says('こんばんはウル！'));
    counter.reset();
    expect(await p.runner.handleUserRequest(current)).toEqual({ completed: true });
    expect(firstStatements).toBe(1);
    expect(takesAtRequest).toEqual([0]);
    expect(takenWhileThinking).toEqual([false]);
    expect(takes()).toBe(1);
    expect(p.sender.sent.at(-1)!.text).toBe('こんばんはウル！');
    expect(await t.db.outboundMessage.findUnique({ where: { dedupeKey: replyKeyOf(current) } })).toMatchObject({
      status: 'sent',
      claimedBy: current.claimToken,
    });
  });

  it('a claim lost before the first statement: the row is reserved untaken and nothing is posted', async () => {
    current = await p.take(consoleMessage('おやすみ'));
    await t.db.workItem.update({ where: { id: current.id }, data: { claimedBy: 'another-worker' } });
    p.brain.script(says('おやすみウル！'));
    const posted = p.sender.sent.length;
    await expect(p.runner.handleUserRequest(current)).rejects.toBeInstanceOf(ClaimLostError);
    expect(takenWhileThinking).toEqual([false]);
    expect(firstStatements).toBe(1);
    expect(p.sender.sent).toHaveLength(posted);
    expect(await t.db.outboundMessage.findUnique({ where: { dedupeKey: replyKeyOf(current) } })).toMatchObject({
      status: 'sending',
      claimedBy: null,
    });
  });
});
