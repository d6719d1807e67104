import { proposes, says } from '../fakes/fake-brain';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { consoleMessage, createTestPipeline, type TestPipeline } from '../helpers/pipeline';

/**
 * Issue 40: an assignee who moves the due date of a task someone gave them used to do it silently — the giver
 * never heard. Now whoever gave the task is told, once, through the notice delivery (persona, Guardian, outbox),
 * in the room where they gave it, with a mention.
 */
describe('a due date moved by the assignee', () => {
  let t: TestDatabase;
  let p: TestPipeline;
  let n = 0;
  /** The service's clock: Thursday 2026-11-26 10:00 in Tokyo, outside quiet hours (21:00-08:00) unless moved. */
  let clock = new Date('2026-11-26T01:00:00Z');

  beforeAll(async () => {
    t = await createTestDatabase();
    p = await createTestPipeline(t, {}, { now: () => clock });
  });
  beforeEach(() => {
    clock = new Date('2026-11-26T01:00:00Z');
  });
  afterAll(() => t.close());

  /** 「企画書」 given by 鈴木 to 田中太郎 in a console room, due Monday 11/30. */
  async function given(createdBy = 'suzuki-kenji') {
    const roomId = `console-tasks-${++n}`;
    const task = await t.db.task.create({
      data: {
        orgId: 'acme',
        platform: 'console',
        roomId,
        title: '企画書',
        assigneeMemberId: 'tanaka-taro',
        createdByMemberId: createdBy,
        dueAt: new Date('2026-11-30T14:59:59Z'),
      },
    });
    return { task, roomId };
  }

  const noticesOf = (taskRoom: string) =>
    t.db.workItem.findMany({ where: { type: 'notification', payload: { path: ['roomId'], equals: taskRoom } } });

  it('tells whoever gave the task, once, in the room where they gave it', async () => {
    const { task, roomId } = await given();
    // 田中太郎 asks in their own room (not where the task was given); their own task: no question first.
    p.brain.script(
      proposes([{ tool: 'change_task', params: { task_id: task.id, due: '2026-12-04' } }]),
      says('企画書の期限を12/4（金）に延ばしたウル！'),
    );
    const item = await p.take(consoleMessage('企画書の期限、12/4に延ばします', { roomId: 'console-tanaka' }));
    expect(await p.runner.handleUserRequest(item)).toEqual({ completed: true });
    expect((await t.db.task.findUniqueOrThrow({ where: { id: task.id } })).dueAt?.toISOString()).toBe(
      '2026-12-04T14:59:59.000Z',
    );

    // The reply is written knowing who will be told (never claiming a notice that was not queued).
    expect(JSON.stringify(p.brain.asked.at(-1)!.continuation)).toContain('notified\\":\\"鈴木健二');
    const queued = await noticesOf(roomId);
    expect(queued).toHaveLength(1);
    const notice = await p.queue.claim(['notification']);
    expect(notice?.payload).toMatchObject({ kind: 'task_due_changed', platform: 'console', roomId });
    p.brain.script(says('鈴木さん、田中太郎さんが『企画書』の期限を11/30（月）→12/4（金）に変えたウル🐺'));
    await p.notices.handle(notice!);
    const posted = p.sender.sent.filter((s) => s.roomId === roomId);
    expect(posted.map((s) => s.text)).toEqual([
      '鈴木さん、田中太郎さんが『企画書』の期限を11/30（月）→12/4（金）に変えたウル🐺',
    ]);
    expect(posted[0]!.mentionAccountIds).toEqual(['suzuki-kenji']);
    // The brain wrote it for the giver from the change's facts only.
    const asked = p.brain.asked.at(-1)!;
    expect(asked.ctx.sender.name).toBe('鈴木健二');
    const facts = asked.ctx.sections.find((s) => s.title === 'タスクの期限の変更')!.lines.join('\n');
    expect(facts).toContain('タスク: 企画書');
    expect(facts).toContain('変更した人: 田中太郎');
    expect(facts).toContain('期限: 11/30（月） → 12/4（金）');
    // The same item again (a retry after a crash): nothing more is posted.
    await p.notices.handle(notice!);
    expect(p.sender.sent.filter((s) => s.roomId === roomId)).toHaveLength(1);
    const turn = await t.db.turnRecord.findFirstOrThrow({ where: { roomId, kind: 'notification' } });
    expect(turn).toMatchObject({ decision: 'NOTICE', reasonCode: 'P_TASK_DUE_CHANGED' });
  });

  it('without the model the persona’s own words say it', async () => {
    const { task, roomId } = await given();
    p.brain.script(
      proposes([{ tool: 'change_task', params: { task_id: task.id, due: '2026-12-02' } }]),
      says('延ばしたウル！'),
    );
    await p.runner.handleUserRequest(await p.take(consoleMessage('企画書は水曜まででお願いします')));
    const notice = await p.queue.claim(['notification']);
    p.brain.script(new Error('model down'));
    await p.notices.handle(notice!);
    expect(p.sender.sent.filter((s) => s.roomId === roomId).map((s) => s.text)).toEqual([
      '📅 鈴木健二さん、田中太郎さんが『企画書』の期限を 11/30（月） → 12/2（水） に変えたウル。都合が悪ければ田中太郎さんに声をかけてほしいウル🐺',
    ]);
  });

  it('moved at night, the giver hears it when their quiet hours end', async () => {
    const { task, roomId } = await given();
    clock = new Date('2026-11-26T14:00:00Z'); // 23:00 in Tokyo
    p.brain.script(
      proposes([{ tool: 'change_task', params: { task_id: task.id, due: '2026-12-03' } }]),
      says('延ばしたウル！'),
    );
    await p.runner.handleUserRequest(await p.take(consoleMessage('企画書、木曜までにさせてください')));
    const [queued] = await noticesOf(roomId);
    expect(queued?.runAt.toISOString()).toBe('2026-11-26T23:00:00.000Z'); // 08:00 the next morning
    await t.db.workItem.delete({ where: { id: queued!.id } }); // the queue's clock is the database's: not due here
  });

  it('the giver moving their own task’s date, or a title change, tells nobody', async () => {
    const own = await given('tanaka-taro');
    p.brain.script(
      proposes([{ tool: 'change_task', params: { task_id: own.task.id, due: '2026-12-04' } }]),
      says('延ばしたウル！'),
    );
    await p.runner.handleUserRequest(await p.take(consoleMessage('自分の企画書、12/4に延ばして')));
    const other = await given();
    p.brain.script(
      proposes([{ tool: 'change_task', params: { task_id: other.task.id, title: '企画書（改訂版）' } }]),
      says('直したウル！'),
    );
    await p.runner.handleUserRequest(await p.take(consoleMessage('企画書のタイトルを企画書（改訂版）に')));
    expect(await noticesOf(own.roomId)).toEqual([]);
    expect(await noticesOf(other.roomId)).toEqual([]);
  });
});
