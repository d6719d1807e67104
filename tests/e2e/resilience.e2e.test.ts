import { WorkQueue } from '../../src/queue/work-queue';
import { FakeAnthropic, replyCall } from '../fakes/fake-anthropic';
import { FakeChatwork, mentionDelivery, postWebhook } from '../helpers/chatwork';
import { chatworkEnv, startTestService, waitFor, type TestService } from '../helpers/service';

describe('nothing is lost: crashes, LLM failures, bad deliveries', () => {
  let svc: TestService;
  const llm = new FakeAnthropic();
  const cw = new FakeChatwork();
  let room = 6500;

  beforeAll(async () => {
    svc = await startTestService({ ...chatworkEnv(), WORK_CLAIM_TTL_MS: '1000', LLM_TIMEOUT_MS: '1500' });
  });
  afterAll(async () => {
    await svc.close();
  });
  beforeEach(() => {
    cw.install();
    room++;
  });
  afterEach(() => {
    llm.stop();
  });

  async function mention(body: string): Promise<string> {
    const d = mentionDelivery({ from: 1004, room, body: `[To:9999]${body}` });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    return d.messageId;
  }
  const lastTurn = () =>
    waitFor(
      () => svc.db.turnRecord.findFirst({ where: { roomId: String(room) }, orderBy: { createdAt: 'desc' } }),
      8000,
      'turn record',
    );

  it('a worker that dies after claiming: the message is answered exactly once after the claim expires', async () => {
    await svc.pool.stop(1000);
    const messageId = await mention('落ちても大丈夫？');
    // A second instance claims the item and "crashes" (never finishes it).
    const crashed = new WorkQueue(svc.db, { instanceId: 'crashed-instance', claimTtlMs: 300, defaultMaxAttempts: 3 });
    const claimed = await crashed.claim();
    expect(claimed?.dedupeKey).toBe(`msg:chatwork:${room}:${messageId}`);
    llm.script(replyCall('大丈夫ウル、ちゃんと届いているウル🐺'));
    svc.pool.start();
    await waitFor(() => cw.posts.length === 1, 8000, 'reply after claim expiry');
    await new Promise((r) => setTimeout(r, 500));
    expect(cw.posts).toHaveLength(1);
    const item = await svc.db.workItem.findUnique({ where: { dedupeKey: claimed!.dedupeKey } });
    expect(item).toMatchObject({ state: 'done', attempts: 2 });
    expect(await crashed.complete(claimed!)).toBe(false);
  });

  it.each([
    [
      '429 rate limit',
      { status: 429, errorType: 'rate_limit_error', headers: { 'retry-after': '0' } },
      /順番待ち/,
      'LLM_RATE_LIMITED',
    ],
    ['529 overloaded', { status: 529, errorType: 'overloaded_error' }, /混み合って/, 'LLM_UNAVAILABLE'],
    ['timeout', { hangMs: 3000 }, /時間がかかりすぎ/, 'LLM_TIMEOUT'],
  ] as const)('LLM %s → a friendly persona reply with an error id, recorded', async (_name, answer, expected, code) => {
    llm.script(answer as never);
    await mention('調子はどう？');
    await waitFor(() => cw.posts.length === 1, 10000, 'error reply');
    expect(cw.posts[0]!.body).toMatch(expected);
    expect(cw.posts[0]!.body).toMatch(/E-[A-Z0-9]{7}/);
    expect(cw.posts[0]!.body).not.toMatch(/429|529|rate_limit|overloaded|request_id/);
    const turn = await lastTurn();
    expect(turn).toMatchObject({ decision: 'ERROR', reasonCode: code, finalDecider: 'SYSTEM' });
    expect(turn.errorId).toMatch(/^E-/);
  });

  it('a model answer cut halfway is never acted on: friendly reply, nothing executed', async () => {
    // The service asks for 4,096 tokens in one plain request: the answer's JSON arrives cut halfway (the
    // streamed breaks, for longer answers, are in tests/brain/llm-client.test.ts).
    llm.script({ streamBreak: 'truncated' });
    await mention('全員に連絡して');
    await waitFor(() => cw.posts.length === 1, 8000, 'error reply');
    expect(cw.posts[0]!.body).toMatch(/E-[A-Z0-9]{7}/);
    expect(cw.posts[0]!.body).not.toContain('[toall]');
    const turn = await lastTurn();
    expect(turn).toMatchObject({ decision: 'ERROR', finalDecider: 'SYSTEM' });
    expect(turn.proposals).toEqual([]);
  });

  it(
    'unparseable output twice (text without a tool) → one guided ' +
      'retry, then a friendly fallback; the record says why',
    async () => {
      llm.script(
        { content: [{ type: 'text', text: 'こんにちは！' }] },
        { content: [{ type: 'text', text: 'まだテキストです' }] },
      );
      await mention('ねえねえ');
      await waitFor(() => cw.posts.length === 1, 8000, 'fallback reply');
      expect(cw.posts[0]!.body).toMatch(/まとめられなかった/);
      const turn = await lastTurn();
      expect(turn).toMatchObject({ decision: 'ERROR', reasonCode: 'LLM_INVALID_OUTPUT' });
      expect(JSON.stringify(turn.contextSummary)).toContain('no_tool');
      expect(await svc.db.llmUsage.count({ where: { turnId: turn.id } })).toBe(2);
      // The retry carried guidance.
      expect(JSON.stringify(llm.requests[1]!.messages)).toContain('exactly ONE tool call');
    },
  );

  it('missing reasoning → guided retry → success', async () => {
    llm.script(
      {
        content: [
          {
            type: 'tool_use',
            name: 'reply',
            input: {
              reasoning: { intent_understanding: '', context_used: [], no_tool_reason: '', response_strategy: '' },
              confidence: { overall: 0.9, intent: 0.9, parameters: 0.9 },
              text: 'やあ',
            },
          },
        ],
      },
      replyCall('こんにちはウル！今日は何をお手伝いするウル？'),
    );
    await mention('やあ');
    await waitFor(() => cw.posts.length === 1, 8000, 'reply');
    expect(cw.posts[0]!.body).toContain('こんにちはウル');
    const turn = await lastTurn();
    expect(turn.decision).toBe('REPLY');
    expect(JSON.stringify(turn.contextSummary)).toContain('invalid');
  });

  it('an answer cut off by max_tokens is never acted on; it is asked again', async () => {
    llm.script(
      { content: [{ type: 'tool_use', name: 'announce', input: { half: true } }], stop_reason: 'max_tokens' },
      replyCall('短く答えるウル。何をするウル？'),
    );
    await mention('長い話なんだけど');
    await waitFor(() => cw.posts.length === 1, 8000, 'reply');
    expect(cw.posts[0]!.body).toContain('短く答える');
    expect((await lastTurn()).proposals as unknown[]).toEqual([]);
  });

  it('markup injection is neutralised: the model cannot mention everyone', async () => {
    llm.script(replyCall('みんなに知らせるウル [toall] [To:1001] 以上ウル。'));
    await mention('[toall] 全員に知らせて');
    await waitFor(() => cw.posts.length === 1, 8000, 'reply');
    const body = cw.posts[0]!.body;
    expect(body).not.toContain('[toall]');
    expect(body).not.toContain('[To:1001]');
    expect(body.startsWith('[rp aid=1004 to=')).toBe(true);
    // The brain saw the text without the markup.
    expect(JSON.stringify(llm.requests[0]!.messages)).not.toContain('[toall]');
  });

  it('PII in a message is redacted in the turn record, but kept in the conversation history', async () => {
    llm.script(replyCall('了解ウル、控えておくウル🐺'));
    await mention('連絡先は taro.tanaka@example.com と 090-1234-5678 です');
    const turn = await lastTurn();
    expect(turn.inputRedacted).toContain('[EMAIL]');
    expect(turn.inputRedacted).toContain('[PHONE]');
    expect(turn.inputRedacted).not.toContain('example.com');
    const history = await svc.db.conversationMessage.findFirst({ where: { roomId: String(room), role: 'user' } });
    expect(history!.text).toContain('taro.tanaka@example.com');
  });

  it('malformed JSON and oversized bodies are rejected and store nothing', async () => {
    const before = await svc.db.workItem.count();
    const { chatworkSignature } = await import('../../src/adapters/chatwork');
    const bad = '{"webhook_event_type": "mention_to_me", ';
    expect(
      (await postWebhook(svc.url, bad, chatworkSignature(bad, 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY='))).status,
    ).toBe(400);
    const big = JSON.stringify({ pad: 'x'.repeat(1_100_000) });
    expect(
      (await postWebhook(svc.url, big, chatworkSignature(big, 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY='))).status,
    ).toBe(413);
    expect(await svc.db.workItem.count()).toBe(before);
  });
});

describe('abandoned work', () => {
  let svc: TestService;
  const cw = new FakeChatwork();
  beforeAll(async () => {
    svc = await startTestService({ ...chatworkEnv(), WORK_CLAIM_TTL_MS: '1000', WORK_MAX_ATTEMPTS: '2' });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('a message whose worker died on every attempt gives up: failed, one failure reply, then the next', async () => {
    cw.install();
    await svc.pool.stop(1000);
    const d = mentionDelivery({ from: 1004, room: 6900, body: '[To:9999] 落ちる質問' });
    expect((await postWebhook(svc.url, d.raw, d.signature)).status).toBe(200);
    const crashed = new WorkQueue(svc.db, { instanceId: 'crashy', claimTtlMs: 200, defaultMaxAttempts: 2 });
    for (let i = 0; i < 2; i++) {
      await waitFor(() => crashed.claim(), 3000, `crash claim ${i + 1}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    svc.pool.start();
    await waitFor(() => cw.posts.length === 1, 8000, 'failure reply');
    expect(cw.posts[0]!.body).toMatch(/E-[A-Z0-9]{7}/);
    // It gave up (SPEC §5): failed, with the error id the reply names.
    const item = await waitFor(
      () => svc.db.workItem.findFirst({ where: { dedupeKey: `msg:chatwork:6900:${d.messageId}`, state: 'failed' } }),
      5000,
      'item failed',
    );
    expect(item.attempts).toBe(3);
    expect(cw.posts[0]!.body).toContain(item.errorId!);
    expect(await svc.queue.failAbandoned()).toBe(0);
  });
});
