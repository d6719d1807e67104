import { FakeAnthropic, replyCall, toolCall } from '../fakes/fake-anthropic';
import { startTestService, waitFor, type TestService } from '../helpers/service';

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

/**
 * Background work through the whole service (issue 12 §4–5): a console message, the model faked over
 * HTTP, the real worker pool claiming the `work` item and the report `notification`, the read-only admin
 * API for the artifact. One worker, so the scripted model answers arrive in order.
 */
describe('background work through the service', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  beforeAll(async () => {
    svc = await startTestService({ WORKER_CONCURRENCY: '1', ADMIN_TOKEN });
  });
  afterAll(async () => {
    await svc.close();
  });
  afterEach(() => llm.stop());

  const say = (text: string, roomId: string) =>
    fetch(`${svc.url}/console/api/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: svc.url },
      body: JSON.stringify({ memberId: 'suzuki-kenji', text, roomId }),
    });
  const botSaid = (roomId: string) =>
    svc.db.conversationMessage.findMany({ where: { roomId, role: 'assistant' }, orderBy: { id: 'asc' } });

  it('「来週の定例の準備をしておいて」: planned, done in steps, stored as an artifact, reported once', async () => {
    const agenda = Array.from({ length: 30 }, (_, i) => `${i + 1}. 議題 ${i + 1} について話し合う`).join('\n');
    llm.script(
      toolCall('start_work', { goal: '来週の定例の準備', plan: ['議題集めのタスク', 'アジェンダ案'] }),
      replyCall('定例の準備を始めたウル。終わったらここで報告するウル🐺'),
      toolCall('create_task', { assignee: 'me', title: '定例の議題を集める' }),
      replyCall('議題集めのタスクを作ったウル。'),
      toolCall('save_artifact', { title: '定例アジェンダ案', body: agenda }),
      replyCall('アジェンダ案を保存したウル。'),
      replyCall('定例の準備は終わったウル。'),
      replyCall('鈴木さん、定例の準備が終わったウル！アジェンダ案「定例アジェンダ案」を作ったウル🐺'),
    );
    expect((await say('来週の定例の準備をしておいて', 'c-work')).status).toBeLessThan(300);

    const work = await waitFor(
      () => svc.db.backgroundWork.findFirst({ where: { goal: '来週の定例の準備', status: 'done' } }),
      15000,
      'work done',
    );
    expect(work).toMatchObject({ requesterMemberId: 'suzuki-kenji', stepsDone: 2, reasonCode: 'W_DONE' });
    const said = await waitFor(
      async () => ((await botSaid('c-work')).length >= 2 ? botSaid('c-work') : null),
      10000,
      'report',
    );
    expect(said.map((m) => m.text)).toEqual([
      '定例の準備を始めたウル。終わったらここで報告するウル🐺',
      '鈴木さん、定例の準備が終わったウル！アジェンダ案「定例アジェンダ案」を作ったウル🐺',
    ]);
    expect(await svc.db.task.count({ where: { title: '定例の議題を集める', assigneeMemberId: 'suzuki-kenji' } })).toBe(
      1,
    );
    const artifact = await svc.db.artifact.findFirstOrThrow({ where: { backgroundWorkId: work.id } });

    // The brain wrote the report from the facts: a long artifact is referred to by its admin link.
    // (Each deferred tool — start_work, create_task, save_artifact — was found with a search first: 11 requests.)
    expect(llm.requests).toHaveLength(11);
    const reportRequest = JSON.stringify(llm.requests.at(-1));
    expect(reportRequest).toContain('定例アジェンダ案');
    expect(reportRequest).toContain(`/admin/api/artifacts/${artifact.id}`);
    // Each step's request carried the step context as quoted data, never in the system block.
    const step2 = llm.requests.find((r) => JSON.stringify(r.messages).includes('done step 1')) as {
      system: unknown;
      messages: unknown;
    };
    expect(JSON.stringify(step2.messages)).toContain('done step 1 (create_task=ok)');
    expect(JSON.stringify(step2.system)).not.toContain('done step 1');

    // The admin link shows the artifact (read-only, behind the admin token).
    const res = await fetch(`${svc.url}/admin/api/artifacts/${artifact.id}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { artifact: { body: string } }).artifact.body).toBe(agenda);
    expect((await fetch(`${svc.url}/admin/api/artifacts/${artifact.id}`)).status).toBe(401);

    // Nothing more is sent later (one report).
    await new Promise((r) => setTimeout(r, 500));
    expect(await botSaid('c-work')).toHaveLength(2);
    expect(await svc.db.workItem.count({ where: { dedupeKey: `bgwork-report:${work.id}`, state: 'done' } })).toBe(1);
  });

  it('「定例の準備どうなった？」 is answered from the work’s status', async () => {
    llm.script(
      toolCall('work_status', { work: '定例' }),
      replyCall('定例の準備はもう終わっているウル。アジェンダ案もあるウル🐺'),
    );
    await say('定例の準備どうなった？', 'c-status');
    const turn = await waitFor(() => svc.db.turnRecord.findFirst({ where: { roomId: 'c-status' } }), 8000, 'turn');
    const exec = turn.execution as { tool: string; output: { works: { status: string; artifacts: unknown[] }[] } }[];
    expect(exec[0]).toMatchObject({ tool: 'work_status' });
    expect(exec[0]!.output.works[0]).toMatchObject({
      status: 'done',
      artifacts: [expect.objectContaining({ title: '定例アジェンダ案' })],
    });
  });
});
