import type { DecideInput } from '../../src/brain/brain';
import type { InboundMessage } from '../../src/core/chat';
import { Intake } from '../../src/adapters/intake';
import type { ClaimedItem, GaveUp } from '../../src/queue/work-queue';
import { describeWorkError } from '../../src/app/compose-stages';
import { AppError } from '../../src/core/app-error';
import { sqlRunner } from '../../src/db/sql';
import { gaveUpAlert } from '../../src/notices/admin-alerts';
import { failedWork } from '../../src/server/admin/failed-work';
import { WorkStore } from '../../src/work/work-store';
import { proposes, says } from '../fakes/fake-brain';
import { createTestDatabase, type TestDatabase } from '../helpers/db';
import { consoleMessage, createTestPipeline, type TestPipeline } from '../helpers/pipeline';

/**
 * Background work (issue 12 §4–5) on real PostgreSQL with a scripted brain: the pipeline exactly as the
 * service composes it (the same proposal stage, Guardian, Gate, executor and notice delivery), work items
 * claimed from the real work queue.
 */
describe('background work', () => {
  let t: TestDatabase;
  let p: TestPipeline;
  let seq = 0;
  const gaveUp: GaveUp[] = [];

  beforeAll(async () => {
    t = await createTestDatabase();
    p = await createTestPipeline(t, {}, { onGaveUp: (g) => gaveUp.push(g) });
  });
  afterAll(() => t.close());

  /** Claims the next item of `type` and checks it belongs to `workId`. */
  async function claim(pipeline: TestPipeline, type: 'work' | 'notification', workId: string): Promise<ClaimedItem> {
    const item = await pipeline.queue.claim([type]);
    if (!item) throw new Error(`no ${type} item to claim`);
    expect(item.payload).toMatchObject({ workId });
    return item;
  }

  /** Work as start_work stores it (with its first `work` item), for a sample member in the console room. */
  async function newWork(
    memberId = 'tanaka-taro',
    opts: { goal?: string; maxSteps?: number; plan?: string[] } = {},
  ): Promise<string> {
    seq += 1;
    const res = await new WorkStore(t.db).create({
      orgId: 'acme',
      requesterMemberId: memberId,
      platform: 'console',
      roomId: 'console-general',
      accountId: memberId,
      goal: opts.goal ?? `テスト作業 ${seq}`,
      plan: opts.plan ?? [],
      maxSteps: opts.maxSteps,
      originKey: `test-origin-${Date.now()}-${seq}`,
    });
    return res.id;
  }

  /** Stores a message as the adapters do and claims it as a worker would (user requests only). */
  async function take(msg: InboundMessage): Promise<ClaimedItem> {
    await new Intake(p.queue).accept(msg);
    const item = await p.queue.claim(['user_request']);
    if (!item) throw new Error('nothing to claim');
    return item;
  }

  const work = (id: string) => t.db.backgroundWork.findUniqueOrThrow({ where: { id } });
  const reports = (id: string) => t.db.workItem.findMany({ where: { dedupeKey: `bgwork-report:${id}` } });
  /** The message the brain was given for a step (the persona's step instruction). */
  const stepText = (input: DecideInput) => input.ctx.message.text;

  it('a three-step work item creates a task and an artifact and reports exactly once', async () => {
    // The turn: the brain hands the request over as background work.
    p.brain.script(
      proposes([
        {
          tool: 'start_work',
          params: { goal: '来週の定例の準備', plan: ['議題集めのタスクを作る', 'アジェンダを下書きする'] },
        },
      ]),
      says('定例の準備を始めたウル。終わったら報告するウル🐺'),
    );
    const turn = await take(consoleMessage('来週の定例の準備をしておいて'));
    await p.runner.handleUserRequest(turn);
    const started = await t.db.backgroundWork.findFirstOrThrow({ where: { goal: '来週の定例の準備' } });
    expect(started).toMatchObject({ status: 'queued', requesterMemberId: 'tanaka-taro', accountId: 'tanaka-taro' });

    const asked = p.brain.asked.length;
    p.brain.script(
      proposes([{ tool: 'create_task', params: { assignee: 'me', title: '定例の議題を集める', due: '2026-12-01' } }]),
      says('議題集めのタスクを作ったウル。次はアジェンダの下書きウル。'),
      proposes([
        {
          tool: 'save_artifact',
          params: { title: '定例アジェンダ案', body: '1. 先週の振り返り\n2. 今週の予定\n3. その他' },
        },
      ]),
      says('アジェンダ案を保存したウル。'),
      says('定例の準備が終わったウル：議題集めのタスクとアジェンダ案があるウル。'),
    );
    const item = await claim(p, 'work', started.id);
    expect(await p.work.handle(item)).toEqual({ completed: true });

    const done = await work(started.id);
    expect(done).toMatchObject({ status: 'done', reasonCode: 'W_DONE', stepsDone: 2, maxSteps: 8 });
    const tasks = await t.db.task.findMany({ where: { title: '定例の議題を集める' } });
    expect(tasks).toHaveLength(1);
    const artifacts = await t.db.artifact.findMany({ where: { backgroundWorkId: started.id } });
    expect(artifacts).toHaveLength(1);
    expect(artifacts[0]).toMatchObject({ title: '定例アジェンダ案', ownerMemberId: 'tanaka-taro' });
    expect(await t.db.workItem.findUniqueOrThrow({ where: { id: item.id } })).toMatchObject({ state: 'done' });

    // Each step was a turn of the requester with the step context as quoted data; the second step saw the first.
    const steps = p.brain.asked.slice(asked);
    expect(stepText(steps[0]!)).toContain('第1ステップ');
    expect(stepText(steps[2]!)).toContain('第2ステップ');
    const memo = steps[2]!.ctx.sections.find((s) => s.title === 'バックグラウンド作業')!;
    expect(memo.lines.join('\n')).toContain('done step 1 (create_task=ok)');
    expect(memo.lines.join('\n')).toContain(`taskId=${tasks[0]!.id}`);
    expect(memo.lines).toContain('plan: アジェンダを下書きする');
    const ctx = done.stepContext as { completed_steps: unknown[]; artifact_refs: string[] };
    expect(ctx.completed_steps).toHaveLength(2);
    expect(ctx.artifact_refs).toEqual([artifacts[0]!.id]);
    // Every step is recorded like a turn (kind work), with its calls.
    expect(await t.db.turnRecord.count({ where: { workItemId: item.id, kind: 'work' } })).toBe(3);

    // One report: a notification item, written by the brain from the facts, sent once mentioning the requester.
    expect(await reports(started.id)).toHaveLength(1);
    const sentBefore = p.sender.sent.length;
    p.brain.script(says('田中さん、定例の準備が終わったウル！アジェンダ案「定例アジェンダ案」を作ったウル。'));
    const notice = await claim(p, 'notification', started.id);
    await p.notices.handle(notice);
    const facts = p.brain.asked.at(-1)!.ctx.sections.find((s) => s.title === 'バックグラウンド作業の結果')!;
    expect(facts.lines).toContain('資料: 「定例アジェンダ案」 見る方法: 1. 先週の振り返り 2. 今週の予定 3. その他');
    expect(p.sender.sent.slice(sentBefore)).toEqual([
      expect.objectContaining({
        text: '田中さん、定例の準備が終わったウル！アジェンダ案「定例アジェンダ案」を作ったウル。',
        kind: 'notice',
        mentionAccountIds: ['tanaka-taro'],
      }),
    ]);
    // The same notification run again (a retry after a crash) posts nothing more.
    await p.notices.handle(notice);
    expect(p.sender.sent.length).toBe(sentBefore + 1);
  });

  it('a worker killed mid-step: another resumes from the step context, the finished step not repeated', async () => {
    const id = await newWork('tanaka-taro', { goal: '中断テストの作業' });
    // Worker A: step 1 finishes; in step 2 its task is created, then the worker dies before the step is saved.
    let hung: ((err: Error) => void) | undefined;
    const decide = p.brain.decide.bind(p.brain);
    let calls = 0;
    p.brain.decide = async (input) => {
      calls += 1;
      if (calls === 4) return new Promise((_resolve, reject) => (hung = reject));
      return decide(input);
    };
    p.brain.script(
      proposes([{ tool: 'create_task', params: { assignee: 'me', title: '中断テスト1' } }]),
      says('ステップ1完了'),
      proposes([{ tool: 'create_task', params: { assignee: 'me', title: '中断テスト2' } }]),
    );
    const a = await claim(p, 'work', id);
    const running = p.work.handle(a);
    await waitFor(() => hung !== undefined);
    expect((await work(id)).stepsDone).toBe(1);
    expect(await t.db.task.count({ where: { title: { startsWith: '中断テスト' } } })).toBe(2);

    // A's claim expires; worker B (another pipeline on the same database) takes the item over.
    await t.db.workItem.update({ where: { id: a.id }, data: { claimExpiresAt: new Date(Date.now() - 1000) } });
    const q = await createTestPipeline(t);
    q.brain.script(
      proposes([{ tool: 'create_task', params: { assignee: 'me', title: '中断テスト2（言い換え）' } }]),
      says('ステップ2完了'),
      says('全部終わったウル'),
    );
    const b = await claim(q, 'work', id);
    expect(b.id).toBe(a.id);
    expect(await q.work.handle(b)).toEqual({ completed: true });

    // B never re-ran step 1, and step 2's call returned the task A had created (one task each, not two).
    expect(stepText(q.brain.asked[0]!)).toContain('第2ステップ');
    expect(await t.db.task.count({ where: { title: '中断テスト1' } })).toBe(1);
    expect(await t.db.task.count({ where: { title: { startsWith: '中断テスト2' } } })).toBe(1);
    expect(await work(id)).toMatchObject({ status: 'done', stepsDone: 2 });

    // A wakes up without its claim: it changes nothing.
    a.claimLost = true;
    p.brain.decide = decide;
    hung!(new Error('worker A was killed'));
    await running.catch(() => undefined);
    expect(await work(id)).toMatchObject({ status: 'done', stepsDone: 2 });
    expect(await reports(id)).toHaveLength(1);
    await drainReport(p, id);
  });

  it('a step call that needs confirmation asks the requester in the origin room; the work waits', async () => {
    const id = await newWork('tanaka-taro', { goal: '渡辺さんの連絡メモを整える' });
    p.brain.script(
      proposes([
        { tool: 'save_memory', params: { kind: 'person', subject: '渡辺翔', content: '午前中は電話に出られない' } },
      ]),
    );
    const sentBefore = p.sender.sent.length;
    const item = await claim(p, 'work', id);
    expect(await p.work.handle(item)).toEqual({ completed: true });

    // The Gate asked (a memory about someone else): the question went to the origin room, mentioning the requester.
    const w = await work(id);
    expect(w).toMatchObject({ status: 'waiting', stepsDone: 0 });
    const pending = await t.db.pendingAction.findUniqueOrThrow({ where: { id: w.pendingActionId! } });
    expect(pending).toMatchObject({ status: 'pending', roomId: 'console-general', accountId: 'tanaka-taro' });
    const question = p.sender.sent.slice(sentBefore);
    expect(question).toHaveLength(1);
    expect(question[0]).toMatchObject({ roomId: 'console-general', mentionAccountIds: ['tanaka-taro'] });
    expect(question[0]!.text).toContain('渡辺翔');
    expect(await t.db.memory.count({ where: { content: '午前中は電話に出られない' } })).toBe(0);

    // Looked at before the answer: still waiting, looked at again later (nothing asked, nothing run).
    const asked = p.brain.asked.length;
    await t.db.workItem.updateMany({ where: { type: 'work', state: 'queued' }, data: { runAt: new Date() } });
    expect(await p.work.handle(await claim(p, 'work', id))).toEqual({ completed: true });
    expect(p.brain.asked.length).toBe(asked);
    expect(await work(id)).toMatchObject({ status: 'waiting' });

    // The requester answers 「はい」 in the room: the call runs once, as any confirmed call.
    p.brain.script(says('覚えたウル'));
    await p.runner.handleUserRequest(await take(consoleMessage('はい')));
    expect(await t.db.memory.count({ where: { content: '午前中は電話に出られない' } })).toBe(1);

    // The work goes on from there: the confirmed call is its step 1, then it finishes.
    p.brain.script(says('連絡メモを整えたウル'));
    await t.db.workItem.updateMany({ where: { type: 'work', state: 'queued' }, data: { runAt: new Date() } });
    expect(await p.work.handle(await claim(p, 'work', id))).toEqual({ completed: true });
    expect(stepText(p.brain.asked.at(-1)!)).toContain('第2ステップ');
    const done = await work(id);
    expect(done).toMatchObject({ status: 'done', stepsDone: 1, pendingActionId: null });
    expect((done.stepContext as { completed_steps: { tools: unknown[] }[] }).completed_steps[0]!.tools).toEqual([
      { tool: 'save_memory', status: 'ok' },
    ]);
    expect(await t.db.memory.count({ where: { content: '午前中は電話に出られない' } })).toBe(1);
    await drainReport(p, id);
  });

  it('a confirmation the requester declines stops the work and says so', async () => {
    const id = await newWork('tanaka-taro', { goal: '渡辺さんのメモ（取り消し）' });
    p.brain.script(
      proposes([{ tool: 'save_memory', params: { kind: 'person', subject: '渡辺翔', content: '取り消されるメモ' } }]),
    );
    await p.work.handle(await claim(p, 'work', id));
    expect(await work(id)).toMatchObject({ status: 'waiting' });
    await p.runner.handleUserRequest(await take(consoleMessage('いいえ')));
    await t.db.workItem.updateMany({ where: { type: 'work', state: 'queued' }, data: { runAt: new Date() } });
    await p.work.handle(await claim(p, 'work', id));
    expect(await work(id)).toMatchObject({
      status: 'failed',
      reasonCode: 'W_CONFIRMATION_DECLINED',
      reason: 'confirmation cancelled',
    });
    expect(await t.db.memory.count({ where: { content: '取り消されるメモ' } })).toBe(0);
    expect(await reports(id)).toHaveLength(1);
    await drainReport(p, id);
  });

  it('cancelled while waiting for a confirmation (asked from another room): the question is withdrawn', async () => {
    const id = await newWork('tanaka-taro', { goal: '渡辺さんのメモ（中止）' });
    p.brain.script(
      proposes([{ tool: 'save_memory', params: { kind: 'person', subject: '渡辺翔', content: '中止されるメモ' } }]),
    );
    await p.work.handle(await claim(p, 'work', id));
    const { pendingActionId } = await work(id);
    expect(pendingActionId).not.toBeNull();

    p.brain.script(proposes([{ tool: 'cancel_work', params: { work: '渡辺さんのメモ' } }]), says('止めたウル'));
    await p.runner.handleUserRequest(
      await take(consoleMessage('渡辺さんのメモの作業はやめて', { roomId: 'console-dm' })),
    );
    expect(await work(id)).toMatchObject({ status: 'cancelled', reasonCode: 'W_CANCELLED' });
    expect(await t.db.pendingAction.findUniqueOrThrow({ where: { id: pendingActionId! } })).toMatchObject({
      status: 'cancelled',
    });

    // A 「はい」 in the origin room afterwards runs nothing; the work's next look does nothing and reports nothing.
    // (Whether the flow or the brain answers it depends on earlier tests' approvals: nothing is scripted for it.)
    const before = p.brain.pending;
    await p.runner.handleUserRequest(await take(consoleMessage('はい')));
    expect(p.brain.pending).toBe(before);
    expect(await t.db.memory.count({ where: { content: '中止されるメモ' } })).toBe(0);
    await t.db.workItem.updateMany({ where: { type: 'work', state: 'queued' }, data: { runAt: new Date() } });
    await p.work.handle(await claim(p, 'work', id));
    expect(await work(id)).toMatchObject({ status: 'cancelled' });
    expect(await reports(id)).toHaveLength(0);
  });

  it('budget exhausted → stops with BUDGET_EXCEEDED and reports it to the requester', async () => {
    const id = await newWork('tanaka-taro', { goal: '予算テストの作業', maxSteps: 2 });
    p.brain.script(
      proposes([{ tool: 'create_task', params: { assignee: 'me', title: '予算テスト1' } }]),
      says('1つめ'),
      proposes([{ tool: 'create_task', params: { assignee: 'me', title: '予算テスト2' } }]),
      says('2つめ。まだ続くウル'),
    );
    const item = await claim(p, 'work', id);
    expect(await p.work.handle(item)).toEqual({ completed: true });
    expect(p.brain.pending).toBe(0);
    expect(await work(id)).toMatchObject({
      status: 'failed',
      reasonCode: 'BUDGET_EXCEEDED',
      reason: 'steps budget used up',
      stepsDone: 2,
    });
    expect(await reports(id)).toHaveLength(1);

    // Without a usable model answer the persona template carries the facts (still one message).
    const sentBefore = p.sender.sent.length;
    p.brain.script(new Error('model down'));
    await p.notices.handle(await claim(p, 'notification', id));
    const sent = p.sender.sent.slice(sentBefore);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.text).toContain('「予算テストの作業」');
    expect(sent[0]!.text).toContain('上限に達した');
    const record = await t.db.turnRecord.findFirstOrThrow({
      where: { kind: 'notification', finalReply: sent[0]!.text },
    });
    expect(record).toMatchObject({ reasonCode: 'BUDGET_EXCEEDED', decision: 'NOTICE' });
  });

  it('a step that fails twice stops the work with the reason, reported once', async () => {
    const id = await newWork('tanaka-taro', { goal: '失敗テストの作業' });
    p.brain.script(
      proposes([{ tool: 'create_task', params: { assignee: '存在しない人', title: '失敗テスト' } }]),
      says('担当者が見つからなかったウル'),
      proposes([{ tool: 'create_task', params: { assignee: '存在しない人', title: '失敗テスト' } }]),
      says('やっぱり見つからないウル'),
    );
    const item = await claim(p, 'work', id);
    expect(await p.work.handle(item)).toEqual({ completed: true });
    const w = await work(id);
    expect(w).toMatchObject({ status: 'failed', reasonCode: 'W_STEP_FAILED', stepsDone: 0 });
    // A name that fits nobody is asked about (issue 40): the step could not go on without the requester's answer.
    expect(w.reason).toBe('step 1 failed twice: clarify (T_UNKNOWN_PERSON) — create_task: NOT FOUND');
    expect((w.stepContext as { open_issues: string[] }).open_issues).toHaveLength(2);
    expect(await t.db.task.count({ where: { title: '失敗テスト' } })).toBe(0);
    expect(await reports(id)).toHaveLength(1);
    await drainReport(p, id);
  });

  /**
   * What the worker pool does with an attempt that throws (src/queue/worker-pool.ts): the queue records the failure
   * and, on the last attempt, gives the item up — failed, with an error id, and `onGaveUp` raises the alert.
   */
  async function failAsThePoolDoes(item: ClaimedItem, err: unknown) {
    const { text, retryable } = describeWorkError(err);
    return p.queue.fail(item, text, { retryable });
  }

  it('work that fails on its last attempt ends its item failed, listed in /admin and alerted (issue 40)', async () => {
    const id = await newWork('tanaka-taro', { goal: '最後まで失敗する作業' });
    // The item's earlier attempts failed; this claim is its last allowed attempt.
    await t.db.workItem.updateMany({ where: { dedupeKey: `bgwork:${id}:run:0` }, data: { attempts: 4 } });
    const item = await claim(p, 'work', id);
    expect(item.attempts).toBe(item.maxAttempts);
    // The database drops out under the step (a failure the work cannot turn into a step result).
    const build = p.contextBuilder.build.bind(p.contextBuilder);
    p.contextBuilder.build = () =>
      Promise.reject(new AppError('DB_UNAVAILABLE', 'connection lost', { retryable: true }));
    const err = await p.work
      .handle(item)
      .then(
        () => null,
        (e: unknown) => e,
      )
      .finally(() => {
        p.contextBuilder.build = build;
      });
    expect(err).toBeInstanceOf(AppError);
    expect(await work(id)).toMatchObject({ status: 'failed', reasonCode: 'W_ERROR' });
    expect(await reports(id)).toHaveLength(1);
    expect(await failAsThePoolDoes(item, err)).toBe('failed');
    const row = await t.db.workItem.findUniqueOrThrow({ where: { id: item.id } });
    expect(row).toMatchObject({ state: 'failed', errorId: expect.stringMatching(/^E-[A-Z0-9]{7}$/) });
    // Alerted: the queue's give-up (the service raises work_abandoned from it) says the requester is told.
    const g = gaveUp.find((x) => x.id === item.id)!;
    expect(gaveUpAlert(g).facts).toMatchObject({
      work: 'バックグラウンド処理',
      errorId: row.errorId,
      told: '依頼した人に作業が止まったことを報告します',
    });
    // Listed in /admin, in Japanese, with whether the requester has been told yet.
    const listed = () => failedWork(sqlRunner(t.db)).then((l) => l.find((f) => f.errorId === row.errorId));
    expect(await listed()).toMatchObject({
      what: 'バックグラウンド処理',
      cause: 'データベースに接続できない',
      told: '未送信',
    });
    await drainReport(p, id);
    expect(await listed()).toMatchObject({ told: '送信済み' });
  });

  it('work whose worker died on every attempt stops and tells the requester, without thinking again', async () => {
    const id = await newWork('tanaka-taro', { goal: '落ち続ける作業' });
    const item = await claim(p, 'work', id);
    const asked = p.brain.asked.length;
    const err = await p.work.handle({ ...item, attempts: item.maxAttempts + 1 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(await failAsThePoolDoes({ ...item, attempts: item.maxAttempts + 1 }, err)).toBe('failed');
    expect(await work(id)).toMatchObject({ status: 'failed', reasonCode: 'W_ABANDONED' });
    const abandoned = (await failedWork(sqlRunner(t.db))).find((f) => f.id === String(item.id));
    expect(abandoned).toMatchObject({ what: 'バックグラウンド処理', cause: '処理中の停止が続いた' });
    expect(p.brain.asked.length).toBe(asked);
    expect(await reports(id)).toHaveLength(1);
    const sentBefore = p.sender.sent.length;
    p.brain.script(new Error('model down'));
    await p.notices.handle(await claim(p, 'notification', id));
    expect(p.sender.sent.slice(sentBefore).map((m) => m.text)).toEqual([
      '田中太郎さん、お願いされていた「落ち続ける作業」の件は、途中でエラーが続いたので止めたウル。' +
        '続けるなら、やり方を変えてもう一度お願いしてほしいウル🐺',
    ]);
  });

  it('requester removed from the directory → cancelled and recorded, nothing asked or sent', async () => {
    const id = await newWork('ito-yui', { goal: '退職者の作業' });
    await t.db.member.update({ where: { orgId_id: { orgId: 'acme', id: 'ito-yui' } }, data: { active: false } });
    const asked = p.brain.asked.length;
    const item = await claim(p, 'work', id);
    expect(await p.work.handle(item)).toEqual({ completed: true });
    expect(await work(id)).toMatchObject({ status: 'cancelled', reasonCode: 'W_REQUESTER_LEFT' });
    expect(p.brain.asked.length).toBe(asked);
    expect(await reports(id)).toHaveLength(0);
    expect(await t.db.workItem.findUniqueOrThrow({ where: { id: item.id } })).toMatchObject({ state: 'done' });
    await t.db.member.update({ where: { orgId_id: { orgId: 'acme', id: 'ito-yui' } }, data: { active: true } });
  });

  it('status and cancel by asking; only the requester (or an executive) can cancel', async () => {
    const id = await newWork('tanaka-taro', { goal: '再来週の定例の準備' });

    p.brain.script(proposes([{ tool: 'work_status', params: { work: '定例' } }]), says('まだ始まったところウル'));
    const statusTurn = await take(consoleMessage('定例の準備どうなった？'));
    await p.runner.handleUserRequest(statusTurn);
    const statusRecord = await t.db.turnRecord.findFirstOrThrow({ where: { workItemId: statusTurn.id } });
    const exec = statusRecord.execution as { tool: string; output: { works: { workId: string; status: string }[] } }[];
    expect(exec[0]!.tool).toBe('work_status');
    expect(exec[0]!.output.works[0]).toMatchObject({ workId: id, status: 'queued' });

    // 田中花子 (level 2) asks to cancel 田中太郎's work: it is not hers, nothing changes.
    p.brain.script(proposes([{ tool: 'cancel_work', params: { work: '再来週の定例' } }]), says('見つからないウル'));
    const other = await take(
      consoleMessage('再来週の定例の準備はやめて', { senderAccountId: 'tanaka-hanako', senderName: '田中花子' }),
    );
    await p.runner.handleUserRequest(other);
    expect(await work(id)).toMatchObject({ status: 'queued' });

    p.brain.script(proposes([{ tool: 'cancel_work', params: { work: '再来週の定例' } }]), says('止めたウル'));
    await p.runner.handleUserRequest(await take(consoleMessage('再来週の定例の準備はもうやめて')));
    expect(await work(id)).toMatchObject({ status: 'cancelled', reasonCode: 'W_CANCELLED' });

    // The runner that takes the cancelled work does nothing and reports nothing.
    const asked = p.brain.asked.length;
    await p.work.handle(await claim(p, 'work', id));
    expect(p.brain.asked.length).toBe(asked);
    expect(await reports(id)).toHaveLength(0);
  });
});

/** Handles the work's report notification (so later claims see only their own items). */
async function drainReport(p: TestPipeline, workId: string): Promise<void> {
  const item = await p.queue.claim(['notification']);
  if (!item) return;
  expect(item.payload).toMatchObject({ workId });
  p.brain.script(says('報告ウル'));
  await p.notices.handle(item);
}

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}
