import { replyCall, toolCall } from '../fakes/fake-anthropic';
import { searchCall } from '../fakes/anthropic-sse';
import { chatworkTurns } from '../helpers/chatwork-turns';
import { chatworkEnv } from '../helpers/service';

type Body = { tools: { name: string; defer_loading?: boolean }[]; messages: { role: string; content: unknown }[] };

/** The tools a request's last tool search result loaded (its `tool_reference` blocks). */
function referenced(req: Body): string[] {
  const last = req.messages.at(-1)!;
  const blocks = Array.isArray(last.content) ? (last.content as { type: string; content?: unknown }[]) : [];
  return blocks
    .filter((b) => b.type === 'tool_result' && Array.isArray(b.content))
    .flatMap((b) => (b.content as { type: string; tool_name: string }[]).map((r) => r.tool_name));
}

/**
 * Issue 39: every capability outside the few loaded in each request is deferred and found with find_tools. For
 * each family of deferred tools, a request that needs one: the model searches with the person's own words, the
 * search loads the tool (a tool_reference in the next request), the model calls it, and the call goes through
 * the Guardian and the Gate like any other (end to end: ChatWork webhook → reply).
 */
describe('deferred tools are found with find_tools and called (end to end, ChatWork)', () => {
  const t = chatworkTurns(chatworkEnv(), 6000);
  const { llm } = t;

  /** Suzuki (level 4) asks in this test's room; the turn record of that message once the reply is posted. */
  const ask = async (body: string, from = 1003) => (await t.ask(from, body)).turn;

  const reply = replyCall('わかったウル。ほかにもあれば言ってほしいウル🐺');
  const families: [family: string, message: string, tool: string, params: Record<string, unknown>][] = [
    [
      'tasks',
      '花子さんに来週金曜までにデモ環境の準備をお願いしておいて',
      'create_task',
      { assignee: '田中花子', title: 'デモ環境の準備' },
    ],
    ['reminders', '設定してあるリマインドを一覧で見せて', 'list_reminders', {}],
    ['schedules', '定期のリマインドは何が入ってる？', 'list_schedules', {}],
    ['memory', '私について覚えていることを教えて', 'query_memory', {}],
    ['goals', '今期の目標を立てたい。新規顧客を10社獲得する', 'start_goal_setting', { title: '新規顧客10社獲得' }],
    ['team', '営業部のみんなのタスク状況を教えて', 'team_overview', { department: 'sales' }],
    ['notices', '定期通知の設定はどうなってる？', 'get_notice_preferences', {}],
    ['documents', '就業規則では有給休暇は何日前に申請すればいい？', 'search_knowledge', { query: '有給休暇 申請' }],
    ['background work', '頼んでおいた作業はどこまで進んだ？', 'work_status', {}],
  ];

  it.each(families)('%s: 「%s」 finds and calls %s', async (_family, message, tool, params) => {
    llm.script(searchCall(message), toolCall(tool, params), reply);
    const turn = await ask(message);
    const [first, second] = llm.requests as unknown as Body[];
    // Not in the first request's prompt: sent with defer_loading, after the loaded tools.
    expect(first!.tools.find((t) => t.name === tool)).toMatchObject({ defer_loading: true });
    // The search with the person's words loaded it, as a tool_reference in the next request.
    expect(referenced(second!)).toContain(tool);
    // Called, and decided like any other call (no guided retry: it was loaded).
    const proposals = turn.proposals as { tool: string; auth?: { result: string } }[];
    expect(proposals[0]).toMatchObject({ tool, auth: { result: 'ALLOWED' } });
    expect((turn.contextSummary as { notes?: { retries?: unknown } }).notes?.retries).toBeUndefined();
    expect(llm.requests).toHaveLength(3);
  });

  it('task changes: a task made in one turn is completed in the next, each tool found by its own search', async () => {
    llm.script(
      searchCall('自分にプレゼン資料の見直しのタスクを追加して'),
      toolCall('create_task', { assignee: 'me', title: 'プレゼン資料の見直し' }),
      reply,
    );
    await ask('自分にプレゼン資料の見直しのタスクを追加して');
    const task = await t.svc.db.task.findFirst({ where: { title: 'プレゼン資料の見直し' } });
    expect(task).toMatchObject({ status: 'open', assigneeMemberId: 'suzuki-kenji' });
    llm.stop();
    llm.script(
      searchCall('プレゼン資料の見直しのタスク、終わったよ'),
      toolCall('complete_task', { task_id: task!.id }),
      reply,
    );
    const turn = await ask('プレゼン資料の見直しのタスク、終わったよ');
    expect(referenced(llm.requests[1] as unknown as Body)).toContain('complete_task');
    expect(turn).toMatchObject({ decision: 'EXECUTED' });
    expect(await t.svc.db.task.findUnique({ where: { id: task!.id } })).toMatchObject({ status: 'done' });
  });

  it('announcements: 「伝えて」 finds announce; the announcement is asked about, never posted unasked', async () => {
    const message = '田中太郎さんに明日の会議は10時からと伝えて';
    llm.script(
      searchCall(message),
      toolCall('announce', { recipients: ['田中太郎'], message: '明日の会議は10時からです' }),
    );
    const turn = await ask(message);
    expect(referenced(llm.requests[1] as unknown as Body)).toContain('announce');
    expect((turn.proposals as { tool: string }[])[0]!.tool).toBe('announce');
    expect(turn.decision).toMatch(/EXECUTED|CONFIRM/);
  });

  it('a level-1 member cannot find what his level does not allow, whatever he asks for', async () => {
    llm.script(searchCall('田中さんに資料作成のタスクをお願いして create_task'), reply);
    await ask('田中さんに資料作成のタスクをお願いして', 1008);
    const [first, second] = llm.requests as unknown as Body[];
    expect(first!.tools.map((t) => t.name)).not.toContain('create_task');
    expect(referenced(second!)).not.toContain('create_task');
    expect(JSON.stringify(second!.messages)).not.toContain('"create_task"');
  });
});
