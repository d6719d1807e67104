import { FakeAnthropic, replyCall, type ScriptedAnswer } from '../fakes/fake-anthropic';
import { startTestService, waitFor, type TestService } from '../helpers/service';

const PHONE = '090-1234-5678';
const summaryAnswer = (summary: string): ScriptedAnswer => ({
  content: [{ type: 'tool_use', name: 'write_summary', input: { summary } }],
});

describe('conversation summaries (R-X4, issue 12 §1)', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  beforeAll(async () => {
    svc = await startTestService({ SUMMARY_EVERY_MESSAGES: '20' });
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
  const replies = (roomId: string) => svc.db.conversationMessage.count({ where: { roomId, role: 'assistant' } });

  it('a 40-message conversation is summarised in the background; 「あれどうなった？」 gets the early thread', async () => {
    const roomId = 'c-summary';
    const { id: orgId } = await svc.db.organization.findFirstOrThrow();
    // 38 earlier messages of this conversation: the early thread first, then unrelated small talk.
    const base = Date.now() - 3 * 3600_000;
    const early = [
      `展示会のブース設営の見積もり、山田工務店に頼んでおいて。担当の携帯は ${PHONE} です`,
      '承知しましたウル。山田工務店に見積もりを依頼する件、覚えておくウル🐺',
      '見積もりの期限は来週の金曜でお願い',
      '来週金曜までに見積もりをもらう件、了解ウル！',
    ];
    const filler = Array.from({ length: 34 }, (_, i) =>
      i % 2 === 0
        ? `雑談その${i / 2 + 1}：今日の昼は何にしようかな`
        : `いいですねウル。お昼の話その${(i - 1) / 2 + 1}ウル`,
    );
    await svc.db.conversationMessage.createMany({
      data: [...early, ...filler].map((text, i) => ({
        orgId,
        platform: 'console',
        roomId,
        accountId: 'suzuki-kenji',
        role: i % 2 === 0 ? 'user' : 'assistant',
        text,
        platformMessageId: i % 2 === 0 ? `seed-${i}` : null,
        sentAt: new Date(base + i * 60_000),
      })),
    });

    // Message 39 and its reply (40). The summary call comes after the reply: its first attempt fails slowly,
    // the reply does not wait for it, and the work queue retries it.
    llm.script(
      replyCall('どういたしましてウル🐺'),
      { status: 500, errorType: 'api_error', delayMs: 4000, headers: { 'x-should-retry': 'false' } },
      summaryAnswer(`展示会ブース設営の見積もりを山田工務店に依頼中（担当の携帯 ${PHONE}）。期限は来週金曜。`),
    );
    await say('ありがとう', roomId);
    await waitFor(async () => (await replies(roomId)) === 20, 5000, 'reply');
    // The reply is out while the summary's first attempt still hangs: it never waited for it.
    expect(await svc.db.conversationSummary.count()).toBe(0);
    const pending = await svc.db.workItem.findFirstOrThrow({ where: { dedupeKey: { startsWith: 'summary:' } } });
    expect(pending).toMatchObject({ type: 'work', orderingKey: `summary:console:${roomId}:suzuki-kenji` });
    expect(['queued', 'running']).toContain(pending.state);

    const summary = await waitFor(
      () => svc.db.conversationSummary.findFirst({ where: { platform: 'console', roomId, accountId: 'suzuki-kenji' } }),
      15000,
      'summary',
    );
    // Written by the background runner: a `work` item of its own that failed once and was retried.
    const item = await svc.db.workItem.findFirstOrThrow({ where: { dedupeKey: { startsWith: 'summary:' } } });
    expect(item).toMatchObject({ type: 'work', state: 'done', attempts: 2 });
    expect(await svc.db.workItem.count({ where: { dedupeKey: { startsWith: 'summary:' } } })).toBe(1);
    // It covers the 30 messages before the recent window of 10, and is redacted.
    const ids = (await svc.db.conversationMessage.findMany({ where: { roomId }, orderBy: { id: 'asc' } })).map(
      (m) => m.id,
    );
    expect(ids).toHaveLength(40);
    expect(summary.coversUpToId).toBe(ids[29]);
    expect(summary.summary).toContain('山田工務店');
    expect(summary.summary).not.toContain(PHONE);
    // The summary request: the early thread as quoted data, the phone number already redacted; its cost recorded.
    const request = JSON.stringify(llm.requests[2]);
    expect(request).toContain('"name":"write_summary"');
    expect(request).toContain('展示会のブース設営');
    expect(request).not.toContain(PHONE);
    expect(request).not.toContain('1234-5678');
    expect(JSON.stringify(llm.requests[0])).not.toContain('write_summary');
    expect(await svc.db.llmUsage.count({ where: { purpose: 'conversation_summary', turnId: null } })).toBe(1);

    // Later: 「あれどうなった？」 — the early thread is long out of the recent window, but the summary is there.
    llm.script(replyCall('山田工務店の見積もりは来週金曜が期限ウル。まだ届いていないウル🐺'));
    await say('あれどうなった？', roomId);
    await waitFor(async () => (await replies(roomId)) === 21, 5000, 'second reply');
    const turn = llm.requests[3] as { system: unknown; messages: { role: string; content: unknown }[] };
    const last = JSON.stringify(turn.messages.at(-1));
    expect(last).toContain('これまでの会話の要約');
    expect(last).toContain('展示会ブース設営の見積もりを山田工務店に依頼中');
    expect(last).not.toContain(PHONE);
    // Quoted data in the user turn, never in the system block; the early messages themselves are not sent.
    expect(JSON.stringify(turn.system)).not.toContain('山田工務店');
    expect(JSON.stringify(turn.messages)).not.toContain('展示会のブース設営');
    // 42 messages, 12 beyond the summary: no new summary yet.
    await new Promise((r) => setTimeout(r, 300));
    expect(await svc.db.workItem.count({ where: { dedupeKey: { startsWith: 'summary:' } } })).toBe(1);
  }, 30000);

  it('a burst of turns enqueues one summary item for the conversation', async () => {
    const roomId = 'c-burst';
    const { id: orgId } = await svc.db.organization.findFirstOrThrow();
    await svc.db.conversationMessage.createMany({
      data: Array.from({ length: 36 }, (_, i) => ({
        orgId,
        platform: 'console',
        roomId,
        accountId: 'suzuki-kenji',
        role: i % 2 === 0 ? 'user' : 'assistant',
        text: `メッセージ${i}`,
        platformMessageId: i % 2 === 0 ? `burst-${i}` : null,
        sentAt: new Date(Date.now() - 3600_000 + i * 1000),
      })),
    });
    // Hold the summary back (the model hangs) while three more turns arrive.
    llm.script(
      replyCall('はいウル'),
      { hangMs: 3000 },
      replyCall('はいウル'),
      replyCall('はいウル'),
      summaryAnswer('メッセージのやりとりが続いている。'),
    );
    for (let n = 1; n <= 3; n++) {
      await say(`追加${n}`, roomId);
      await waitFor(async () => (await replies(roomId)) === 18 + n, 5000, `reply ${n}`);
    }
    expect(await svc.db.workItem.count({ where: { dedupeKey: { startsWith: `summary:console:${roomId}:` } } })).toBe(1);
    // The held-back item is retried and written (and nothing of it is left running for the next test).
    await waitFor(() => svc.db.conversationSummary.findFirst({ where: { roomId } }), 15000, 'burst summary');
  }, 30000);

  it('an answer without a summary is paid for, recorded and retried by the work queue', async () => {
    const roomId = 'c-unusable';
    const { id: orgId } = await svc.db.organization.findFirstOrThrow();
    await svc.db.conversationMessage.createMany({
      data: Array.from({ length: 38 }, (_, i) => ({
        orgId,
        platform: 'console',
        roomId,
        accountId: 'suzuki-kenji',
        role: i % 2 === 0 ? 'user' : 'assistant',
        text: i === 0 ? '来月の社員旅行の幹事は佐藤さんにお願いする' : `やりとり${i}`,
        platformMessageId: i % 2 === 0 ? `unusable-${i}` : null,
        sentAt: new Date(Date.now() - 3600_000 + i * 1000),
      })),
    });
    const usageBefore = await svc.db.llmUsage.count({ where: { purpose: 'conversation_summary' } });
    llm.script(
      replyCall('了解ウル'),
      replyCall('要約ではない答えウル'),
      summaryAnswer('来月の社員旅行の幹事を佐藤さんに依頼した。'),
    );
    await say('よろしく', roomId);
    const summary = await waitFor(
      () => svc.db.conversationSummary.findFirst({ where: { roomId } }),
      15000,
      'summary after a retry',
    );
    expect(summary.summary).toBe('来月の社員旅行の幹事を佐藤さんに依頼した。');
    const item = await svc.db.workItem.findFirstOrThrow({
      where: { dedupeKey: { startsWith: `summary:console:${roomId}:` } },
    });
    expect(item).toMatchObject({ state: 'done', attempts: 2 });
    expect(await svc.db.llmUsage.count({ where: { purpose: 'conversation_summary' } })).toBe(usageBefore + 2);
  }, 30000);
});
