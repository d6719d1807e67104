import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook, sendTimeNow, toButton } from '../helpers/chatwork';
import { chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

/** Which model each request of a turn goes to (LLM_ROUTING, LLM_SMALL_MODEL), as the Messages API receives them. */
describe.each([
  { routing: 'true', report: 'claude-haiku-5-5' },
  { routing: 'false', report: 'claude-opus-5-5' },
])('model routing (LLM_ROUTING=$routing)', ({ routing, report }) => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();
  let room = 6300;

  beforeAll(async () => {
    svc = await startTestService({ ...chatworkEnv(), LLM_ROUTING: routing, LLM_SMALL_MODEL: 'claude-haiku-5-5' });
  });
  afterAll(() => svc.close());
  beforeEach(() => {
    cw.install();
    room++;
  });
  afterEach(() => llm.stop());

  async function say(from: number, body: string, n: number): Promise<string> {
    const d = mentionDelivery({ from, room, body: toButton(body), eventTime: sendTimeNow() });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    await waitFor(() => cw.posts.length >= n, 8000, `post #${n}`);
    return cw.posts[n - 1]!.body;
  }
  const models = () => llm.requests.map((r) => r.model);

  it('a turn that may act and every step of its tool loop go to the main model', async () => {
    llm.script(toolCall('lookup_person', { query: '佐藤' }), replyCall('佐藤美咲さんは東京営業課ウル。'));
    expect(await say(1003, '佐藤さんってどこの部署？', 1)).toContain('東京営業課');
    expect(models()).toEqual(models().map(() => 'claude-opus-5-5'));
    expect(models().length).toBeGreaterThanOrEqual(2);
  });

  it('a confirmed action is reported (no capability tool offered) by the small model if routing is on', async () => {
    llm.script(toolCall('create_task', { assignee: '田中太郎', title: '議事録の作成' }, { overall: 0.6 }));
    expect(await say(1003, '田中さん…太郎さんの方に議事録をお願いしたいかも', 1)).toMatch(/実行してよい/);
    llm.script(replyCall('田中太郎さんに議事録の作成をお願いしたウル！'));
    expect(await say(1003, 'はい', 2)).toContain('議事録');
    // The request turn (with a tool search first when the tool is deferred) on the main model, the report after.
    expect(models().slice(0, -1)).toEqual(
      models()
        .slice(0, -1)
        .map(() => 'claude-opus-5-5'),
    );
    expect(models().length).toBeGreaterThanOrEqual(2);
    expect(models().at(-1)).toBe(report);
    // Offered only the reply and question tools: whatever it answers, it cannot propose an action.
    const offered = (llm.requests.at(-1)!.tools as { name: string }[]).map((t) => t.name).sort();
    expect(offered).toEqual(['ask_clarification', 'reply'].sort());
  });
});
