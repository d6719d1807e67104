import { clarifyCall, replyCall, toolCall, type ScriptedAnswer } from '../fakes/fake-anthropic';
import { chatworkTurns } from '../helpers/chatwork-turns';
import { chatworkEnv } from '../helpers/service';

/**
 * Issue 29, point 1, end to end over ChatWork: a reply never says something happened that did not. The
 * scripted model claims success after each kind of refusal; the room must get the honest text instead.
 */

const TANAKA = 1004; // 田中太郎, level 3
const WATANABE = 1008; // 渡辺翔, level 1 (create_task needs level 2)

const CLAIM = '田中太郎さんに『議事録の清書』のタスクを登録しました！';
const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

/** What the turn record says about the reply's claims check. */
const claimCheckOf = (turn: { contextSummary: unknown }) =>
  (turn.contextSummary as { notes?: { claimCheck?: Record<string, unknown> } }).notes?.claimCheck;

/** A tool call whose `summary` (shown in a confirmation question) says the call was done. */
function claimingCall(name: string, parameters: Record<string, unknown>, summary: string): ScriptedAnswer {
  const answer = toolCall(name, parameters, { overall: 0.6 }) as Extract<ScriptedAnswer, { content: unknown }>;
  const use = answer.content[0] as { input: Record<string, unknown> };
  use.input.summary = summary;
  return answer;
}

describe('replies consistent with the turn (end to end, ChatWork)', () => {
  const t = chatworkTurns({ ...chatworkEnv(), ADMIN_TOKEN }, 7100);
  const { llm, ask } = t;

  it('DENIED: a level-1 member asks for a task for a colleague; the claimed task is not announced', async () => {
    const honest =
      'ごめんなさいウル、いまの権限ではほかの方のタスクは登録できなかったウル。田中さんご本人か上長の方にお願いしてほしいウル🐺';
    llm.script(
      toolCall('create_task', { assignee: '田中太郎', title: '議事録の清書' }),
      replyCall(CLAIM),
      replyCall(honest),
    );
    const { turn, post } = await ask(WATANABE, '田中さんに議事録の清書のタスクを作って');
    expect(await t.svc.db.task.count({ where: { title: '議事録の清書' } })).toBe(0);
    expect(post).not.toContain('登録しました');
    expect(post).toContain(honest);
    expect(turn).toMatchObject({ decision: 'DENIED', authResult: 'DENIED', authReason: 'Z_LEVEL_TOO_LOW' });
    expect(turn.finalReply ?? '').not.toContain('登録しました');
    expect(claimCheckOf(turn)).toEqual({
      reasonCode: 'G_REPLY_UNSUPPORTED_CLAIM',
      claims: ['登録しました'],
      corrected: 'rewritten',
    });
    // The model was asked again with what really happened, and could call nothing.
    const again = llm.requests[2]!;
    expect(JSON.stringify(again.messages)).toContain('Your reply was NOT sent');
    expect(JSON.stringify(again.messages)).toContain(
      'create_task: refused: the person is not permitted (Z_LEVEL_TOO_LOW)',
    );
    expect((again.tools as { name: string }[]).map((t) => t.name).sort()).toEqual(['ask_clarification', 'reply']);

    const metrics = await (await fetch(`${t.svc.url}/metrics`)).text();
    expect(metrics).toMatch(/hisho_reply_claim_corrections_total\{decision="DENIED",outcome="rewritten"\} 1/);
    const audit = (await (
      await fetch(`${t.svc.url}/admin/api/audits/constitution?days=7`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      })
    ).json()) as { checks: Record<string, number>; turns: { id: string; findings: string[] }[] };
    expect(audit.checks.asserts_execution).toBeGreaterThanOrEqual(1);
    expect(audit.turns.find((t) => t.id === turn.id)?.findings).toContain('asserts_execution');
  });

  it('BLOCKED (English): the Guardian stopped it; a rewrite that still claims gives the persona text', async () => {
    llm.script(
      toolCall('create_task', { assignee: '田中太郎', title: 'password: s3cr3t!!' }),
      replyCall("I've created the task for Tanaka."),
      replyCall('Done! The task has been created.'),
    );
    const { turn, post } = await ask(TANAKA, 'Please create a task for Tanaka with our password: s3cr3t!!');
    expect(turn).toMatchObject({ decision: 'BLOCK', guardianAction: 'BLOCK', guardianReason: 'G_NG_PATTERN' });
    expect(await t.svc.db.task.count()).toBe(0);
    expect(post).not.toMatch(/created/i);
    expect(post).toContain('Sorry, my safety rules stopped this, so I did not do it.');
    expect(claimCheckOf(turn)).toMatchObject({ claims: ["I've created"], corrected: 'fallback' });
  });

  it('a handler failed: the model claims it cancelled a reminder; the model is down, the persona says so', async () => {
    llm.script(
      toolCall('cancel_reminder', { reminder_id: 'r-does-not-exist' }),
      replyCall('リマインダーを取り消したウル！'),
    );
    // No third answer: the rewrite fails (the fake answers 500), so the persona's fixed text is said.
    const { turn, post } = await ask(TANAKA, '明日のリマインダーを取り消して');
    expect(turn.decision).toBe('REPLY');
    expect(turn.proposals).toEqual([
      expect.objectContaining({ tool: 'cancel_reminder', execution: expect.objectContaining({ status: 'error' }) }),
    ]);
    expect(post).not.toContain('取り消したウル');
    expect(post).toContain('実行しようとしたけれどうまくいかなかったので、まだ完了していないウル');
    expect(claimCheckOf(turn)).toMatchObject({ claims: ['取り消した'], corrected: 'fallback' });
  });

  it('a clarification: a question that claims the task exists is asked again honestly', async () => {
    llm.script(
      clarifyCall('タスクを登録しました！期限はいつにしますか？', ['今日', '明日']),
      clarifyCall('まだ登録していないウル。期限はいつにするウル？', ['今日', '明日']),
    );
    const { turn, post } = await ask(TANAKA, '議事録の清書のタスクをお願い');
    expect(turn.decision).toBe('CLARIFY');
    expect(post).toContain('まだ登録していないウル。期限はいつにするウル？');
    expect(post).not.toContain('登録しました');
    expect(post).toContain('明日');
    expect(JSON.stringify(llm.requests[1]!.messages)).toContain('no action was carried out in this turn');
  });

  it('CONFIRM asked but not run: the question drops the claiming summary; a later claim is written again', async () => {
    llm.script(
      claimingCall(
        'create_task',
        { assignee: '渡辺翔', title: '出張の手配' },
        '渡辺翔さんに『出張の手配』のタスクを登録しました！',
      ),
    );
    const asked = await ask(TANAKA, '渡辺さんに出張の手配のタスクを作って');
    expect(asked.turn.decision).toBe('CONFIRM');
    expect(asked.post).toMatch(/実行してよい/);
    expect(asked.post).not.toContain('登録しました');
    expect(claimCheckOf(asked.turn)).toMatchObject({ claims: ['登録しました'], corrected: 'dropped' });
    await ask(TANAKA, 'いいえ');
    const honest = 'まだ登録していないウル。さっきの確認は取りやめになったので、必要ならもう一度お願いしてほしいウル🐺';
    llm.script(replyCall('はい、渡辺翔さんのタスクを登録しました！'), replyCall(honest));
    const { turn, post } = await ask(TANAKA, 'さっきのタスクはできた？');
    expect(await t.svc.db.task.count({ where: { title: '出張の手配' } })).toBe(0);
    expect(post).toContain(honest);
    expect(claimCheckOf(turn)).toMatchObject({ corrected: 'rewritten' });
  });

  it('a success that really ran is left alone (Japanese and English)', async () => {
    const done = '『週報の提出』のタスクを登録したウル！';
    llm.script(toolCall('create_task', { assignee: 'me', title: '週報の提出' }), replyCall(done));
    const ja = await ask(TANAKA, '自分に週報の提出のタスクを作って');
    expect(ja.turn.decision).toBe('EXECUTED');
    expect(ja.post).toContain(done);
    // The search for create_task, the call, the reply: no rewrite.
    expect(llm.requests).toHaveLength(3);
    expect(claimCheckOf(ja.turn)).toBeUndefined();

    llm.stop();
    const doneEn = 'I\'ve created the task "Send the minutes" for you.';
    llm.script(toolCall('create_task', { assignee: 'me', title: 'Send the minutes' }), replyCall(doneEn));
    const en = await ask(TANAKA, 'Please add a task for me: send the minutes');
    expect(en.turn.decision).toBe('EXECUTED');
    expect(en.post).toContain(doneEn);
    expect(llm.requests).toHaveLength(3);
    expect(await t.svc.db.task.count({ where: { title: { in: ['週報の提出', 'Send the minutes'] } } })).toBe(2);
  });
});
