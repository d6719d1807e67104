import { clarifyCall, replyCall, toolCall } from '../fakes/fake-anthropic';
import { chatworkTurns } from '../helpers/chatwork-turns';
import { chatworkEnv, waitFor } from '../helpers/service';

/**
 * Issue 40, end to end over ChatWork with the sample organisation: an unknown person is asked about, not refused;
 * departments are found by name; confidentiality protects other people's data, not topics.
 */

const SATO = 1002; // 佐藤美咲, level 5, 管理部 (handles pay and evaluation)
const SUZUKI = 1003; // 鈴木健二, level 4, 営業部長
const TANAKA = 1004; // 田中太郎, level 3, 東京営業課
const ITO = 1007; // 伊藤結衣, level 2, 開発部
const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

describe('people, departments and confidential topics (end to end, ChatWork)', () => {
  const t = chatworkTurns({ ...chatworkEnv(), ADMIN_TOKEN }, 7700);
  const { llm, ask } = t;

  /** Everything the model was sent in this test (the tool results it heard among it). */
  const toolResults = () => llm.requests.map((r) => JSON.stringify(r.messages)).join('\n');

  it('「佐々木さんに…お願い」 with no 佐々木: the model hears "no member matches", the person is asked who', async () => {
    const question = '佐々木さんという方が名簿に見つからなかったウル。どなたのことか教えてほしいウル🐺';
    llm.script(
      toolCall('create_task', { assignee: '佐々木', title: '見積書の作成', due: '2026-12-04' }),
      clarifyCall(question, ['鈴木健二さん', 'ほかの方']),
    );
    const { turn, post } = await ask(SUZUKI, '佐々木さんに見積書の作成をお願いして、期限は来週金曜');
    const heard = toolResults();
    expect(heard).toContain('No member matches \\"佐々木\\"');
    expect(heard).not.toContain('not permitted');
    expect(post).toContain(question);
    expect(post).not.toContain('権限');
    expect(turn).toMatchObject({ decision: 'CLARIFY', reasonCode: 'T_UNKNOWN_PERSON' });
    expect(turn.authResult).not.toBe('DENIED');
    expect(await t.svc.db.task.count({ where: { title: '見積書の作成' } })).toBe(0);
  });

  it('a near name (「鈴本さん」) is offered back; a model claiming it was done gets the persona text, not 権限', async () => {
    llm.script(
      toolCall('create_reminder', { person: '鈴本', when: '2026-12-01T09:00:00+09:00', text: '見積の確認' }),
      replyCall('鈴本さんにリマインドを設定しました！'),
      replyCall('設定しました！'),
    );
    const { turn, post } = await ask(TANAKA, '鈴本さんに12月1日9時に見積の確認をリマインドして');
    expect(toolResults()).toContain('Near matches: 鈴木健二（id: suzuki-kenji、営業部）');
    expect(post).toContain('名簿に見つからなかった');
    expect(post).not.toContain('権限');
    expect(turn).toMatchObject({ decision: 'CLARIFY', reasonCode: 'T_UNKNOWN_PERSON' });
  });

  it('/admin counts unknown names apart from permission denials', async () => {
    const res = await fetch(`${t.svc.url}/admin/api/overview?range=24h`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const body = (await res.json()) as { today: Record<string, number> };
    expect(body.today.denials).toBe(0);
    expect(body.today.unknown_names).toBe(2);
  });

  it('「平日の17時に日報を出すよう営業部に声をかけて」 from a manager: asked, then stored for 営業部', async () => {
    llm.script(
      toolCall('create_room_schedule', {
        rule: { freq: 'weekdays', time: '17:00' },
        text: '日報を提出してください',
        department: '営業部',
      }),
    );
    const { turn, post } = await ask(SUZUKI, '平日の17時に日報を出すよう営業部に声をかけて');
    expect(turn.decision).toBe('CONFIRM');
    expect(post).toContain('営業部のメンバー');
    expect(post).toContain('平日（月〜金）17:00');
    llm.script(replyCall('毎週平日17時に営業部へ日報のお声がけを登録したウル🐺'));
    await ask(SUZUKI, 'はい');
    const schedule = await waitFor(() => t.svc.db.schedule.findFirst({ where: { text: '日報を提出してください' } }));
    expect(schedule.departmentId).toBe('sales');
  });

  it('an alias (「営業」) and an unknown department (「営業二課」) — resolved, and asked about', async () => {
    llm.script(toolCall('team_overview', { department: '営業' }), replyCall('営業部の状況ウル🐺'));
    const a = await ask(SUZUKI, '営業のみんなのタスク状況は？');
    expect(toolResults()).toContain('営業部');
    expect(a.turn.decision).not.toBe('DENIED');
    llm.stop();
    llm.script(
      toolCall('team_overview', { department: '営業二課' }),
      clarifyCall('営業二課という部署が見つからなかったウル。どの部署のことウル？', ['営業部', '東京営業課']),
    );
    const b = await ask(SUZUKI, '営業二課のタスク状況は？');
    expect(toolResults()).toContain('No department matches \\"営業二課\\"');
    expect(b.turn).toMatchObject({ decision: 'CLARIFY', reasonCode: 'T_UNKNOWN_DEPARTMENT' });
  });

  it("a member's own reminder 「給与振込データの送信」 is set and said back; 「性能評価レポート」 too", async () => {
    const said = '12月24日10時に「給与振込データの送信」をリマインドするウル🐺';
    llm.script(
      toolCall('create_reminder', { when: '2026-12-24T10:00:00+09:00', text: '給与振込データの送信' }),
      replyCall(said),
    );
    const a = await ask(TANAKA, '12月24日の10時に給与振込データの送信をリマインドして');
    expect(a.post).toContain(said);
    expect(a.turn.decision).toBe('EXECUTED');
    expect(await t.svc.db.reminder.count({ where: { text: '給与振込データの送信' } })).toBe(1);
    llm.stop();
    llm.script(
      toolCall('create_reminder', { when: '2026-12-01T09:00:00+09:00', text: '性能評価レポートの提出' }),
      replyCall('12月1日9時に「性能評価レポートの提出」をリマインドするウル🐺'),
    );
    const b = await ask(ITO, '性能評価レポートのリマインド、12/1の9時にお願い');
    expect(b.turn.decision).toBe('EXECUTED');
    expect(b.post).toContain('性能評価レポートの提出');
  });

  it("another person's pay stays blocked, whoever asks (管理部 too); 管理部 may give payroll work to others", async () => {
    llm.script(toolCall('query_memory', { subject: '田中太郎', query: '年収' }), replyCall('お答えできないウル'));
    const a = await ask(SATO, '田中太郎さんの年収っていくら？');
    expect(a.turn).toMatchObject({ guardianAction: 'BLOCK', guardianReason: 'G_CONFIDENTIAL' });
    llm.stop();
    llm.script(
      toolCall('create_task', { assignee: '田中太郎', title: '給与振込データの確認', due: '2026-12-20' }),
      replyCall('どうするウル？'),
    );
    const b = await ask(SUZUKI, '田中さんに給与振込データの確認をお願いして、20日まで');
    expect(b.turn).toMatchObject({ guardianAction: 'BLOCK', guardianReason: 'G_CONFIDENTIAL' });
    llm.stop();
    llm.script(
      toolCall('create_task', { assignee: '田中太郎', title: '給与振込データの確認', due: '2026-12-20' }),
      replyCall('田中太郎さんに「給与振込データの確認」をお願いしたウル🐺'),
    );
    const c = await ask(SATO, '田中太郎さんに給与振込データの確認をお願いして、20日まで');
    expect(c.turn.guardianAction).not.toBe('BLOCK');
    expect(c.post).toContain('給与振込データの確認');
  });
});
