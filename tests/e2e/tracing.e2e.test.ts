import { startFakeChatwork } from '../../bench/fake-chatwork-server';
import { startFakeAnthropicServer, hasToolResult, lastUserText } from '../fakes/anthropic-server';
import { replyCall, toolCall, type ScriptedAnswer } from '../fakes/anthropic-sse';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../fakes/otlp-receiver';
import { mentionDelivery, postWebhook, toButton } from '../helpers/chatwork';
import { createTestDatabase } from '../helpers/db';
import { runService, type ServiceProcess } from '../helpers/process';
import { CW_WEBHOOK_TOKEN, TEST_API_KEY, waitFor } from '../helpers/service';

/**
 * Tracing as an operator turns it on (issue 43): `npm start` with the standard OTEL_* variables, exporting to a
 * local OTLP/HTTP receiver. A mention that runs a tool is one trace — the webhook, the turn (`invoke_agent`), its
 * steps, every model call (`chat`) with the tokens the model reported, the tool (`execute_tool`) with the rules'
 * decisions, the database statements; no message text, name or tool argument in any attribute unless the operator
 * opts in; an answer to a confirmation links to the turn that asked.
 */

/** What the fake model reports for each answer (distinct per call, so each `chat` span can be matched). */
const USAGE = {
  tool: { input_tokens: 1234, output_tokens: 56, cache_read_input_tokens: 2048, cache_creation_input_tokens: 321 },
  reply: { input_tokens: 1500, output_tokens: 78, cache_read_input_tokens: 4096, cache_creation_input_tokens: 0 },
};
const TASK_TITLE = '見積書の作成';
const ASK = `田中太郎さんに${TASK_TITLE}のタスクをお願い`;
const REPLY = `田中太郎さんに「${TASK_TITLE}」をお願いしたウル！`;
/** Words that must appear in no attribute by default: the message, the tool's arguments, the reply, a name. */
const PRIVATE = ['見積書', 'タスクをお願い', 'お願いしたウル', '田中'];

function model(req: Parameters<Parameters<typeof startFakeAnthropicServer>[0]>[0]): ScriptedAnswer {
  const text = lastUserText(req);
  if (hasToolResult(req)) return { ...(replyCall(REPLY) as object), usage: USAGE.reply } as ScriptedAnswer;
  if (text.includes('確認して'))
    return toolCall('create_task', { assignee: '田中太郎', title: '議事録の作成' }, { overall: 0.6 });
  if (text.includes('タスク'))
    return {
      ...(toolCall('create_task', { assignee: '田中太郎', title: TASK_TITLE, due: '明日' }) as object),
      usage: USAGE.tool,
    } as ScriptedAnswer;
  return replyCall('はい、わかったウル！');
}

/** Every attribute value of every span (links and resource included), as one text. */
const allAttributes = (spans: ReceivedSpan[]) =>
  JSON.stringify(spans.map((s) => [s.name, s.attributes, s.links, s.resource]));

/** The spans of one trace, and the span's ancestors. */
function ancestors(spans: ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
  const byId = new Map(spans.filter((s) => s.traceId === span.traceId).map((s) => [s.spanId, s]));
  const out: ReceivedSpan[] = [];
  for (let p = byId.get(span.parentSpanId); p; p = byId.get(p.parentSpanId)) out.push(p);
  return out;
}

describe('tracing with OpenTelemetry (npm start, OTLP/HTTP)', () => {
  let llm: Awaited<ReturnType<typeof startFakeAnthropicServer>>;
  let cw: Awaited<ReturnType<typeof startFakeChatwork>>;
  const started: { proc: ServiceProcess; receiver: OtlpReceiver }[] = [];

  beforeAll(async () => {
    llm = await startFakeAnthropicServer(model);
    cw = await startFakeChatwork();
  }, 30000);
  afterAll(async () => {
    for (const s of started) {
      if (s.proc.child.exitCode === null) s.proc.child.kill('SIGKILL');
      await s.receiver.close();
    }
    await llm.close();
    await cw.close();
  });

  async function start(otel: Record<string, string>) {
    const t = await createTestDatabase();
    await t.close();
    const receiver = await startOtlpReceiver();
    const proc = runService({
      DATABASE_URL: t.url,
      PORT: '0',
      ANTHROPIC_API_KEY: TEST_API_KEY,
      ANTHROPIC_BASE_URL: llm.url,
      LLM_MAX_RETRIES: '0',
      LLM_DAILY_COST_LIMIT_USD: '0',
      SELF_CRITIQUE_RATE: '0',
      CHATWORK_API_TOKEN: 'cw-token-for-tests-000',
      CHATWORK_WEBHOOK_TOKEN: CW_WEBHOOK_TOKEN,
      CHATWORK_API_BASE_URL: cw.url,
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      // Export every 100 ms instead of every 5 s.
      OTEL_BSP_SCHEDULE_DELAY: '100',
      ...otel,
    });
    started.push({ proc, receiver });
    const port = await proc.ready;
    return { proc, receiver, url: `http://127.0.0.1:${port}` };
  }

  async function mention(url: string, room: number, body: string) {
    const d = mentionDelivery({ from: 1003, room, body: toButton(body) });
    expect((await postWebhook(url, d.raw, d.signature)).status).toBe(200);
    return d;
  }

  /** Traces of turns already looked at. */
  const seen = new Set<string>();
  const path = (s: ReceivedSpan) => String(s.attributes['url.path'] ?? s.attributes['http.target'] ?? '');

  /** The `invoke_agent` span of the next turn (messages are sent one at a time), once its trace was exported. */
  async function nextTurn(receiver: OtlpReceiver, what: string): Promise<ReceivedSpan> {
    const invoke = await waitFor(
      () =>
        receiver.spans.find(
          (s) =>
            s.name === 'invoke_agent Hisho' &&
            !seen.has(s.traceId) &&
            receiver.spans.some((w) => w.traceId === s.traceId && path(w).includes('/webhooks/chatwork')),
        ),
      20000,
      `the turn's spans of ${what}`,
    );
    seen.add(invoke.traceId);
    // The invoke_agent span ends last: what it holds was exported in the same batch or before.
    return invoke;
  }

  it('exports a mention that runs a tool as one trace with the webhook, without message text (http/json)', async () => {
    const { receiver, url, proc } = await start({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    const d = await mention(url, 5301, ASK);
    await waitFor(() => cw.posts.find((p) => p.body.includes(`to=5301-${d.messageId}]`)), 15000, 'reply posted');
    const invoke = await nextTurn(receiver, 'the mention');
    expect(receiver.contentTypes.every((t) => t.startsWith('application/json'))).toBe(true);
    expect(receiver.otherPaths).toEqual([]);
    const trace = receiver.spans.filter((s) => s.traceId === invoke.traceId);
    const names = trace.map((s) => s.name);

    // The webhook's server span is the root; the turn joins its trace below the span that stored the message.
    const root = trace.find((s) => s.parentSpanId === '')!;
    expect(root.kind).toBe(2);
    expect(ancestors(trace, invoke)).toContain(root);
    expect(trace.find((s) => s.spanId === invoke.parentSpanId)?.name).toBe('receive enqueue');
    expect(names).toEqual(expect.arrayContaining(['receive enqueue', 'step openTurn', 'step buildContext']));
    expect(names).toEqual(expect.arrayContaining(['step think', 'step checkReply', 'step deliver', 'step record']));
    expect(invoke.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'Hisho',
      'gen_ai.provider.name': 'anthropic',
      'hisho.decision': 'executed',
    });

    // One `chat` span per model call, inside the turn, with exactly what the model reported; the turn's are the sums.
    const chats = trace.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat');
    expect(chats.length).toBeGreaterThanOrEqual(2);
    const total = (k: string) => chats.reduce((a, c) => a + Number(c.attributes[k]), 0);
    expect(invoke.attributes['gen_ai.usage.input_tokens']).toBe(total('gen_ai.usage.input_tokens'));
    expect(invoke.attributes['gen_ai.usage.output_tokens']).toBe(total('gen_ai.usage.output_tokens'));
    for (const c of chats) expect(ancestors(trace, c)).toContain(invoke);
    const byInput = (n: number) => chats.find((c) => c.attributes['gen_ai.usage.input_tokens'] === n)!;
    for (const u of [USAGE.tool, USAGE.reply]) {
      expect(byInput(u.input_tokens).attributes).toMatchObject({
        'gen_ai.request.model': 'claude-opus-5-5',
        'gen_ai.usage.output_tokens': u.output_tokens,
        'gen_ai.usage.cache_read.input_tokens': u.cache_read_input_tokens,
        'gen_ai.usage.cache_creation.input_tokens': u.cache_creation_input_tokens,
      });
      expect(byInput(u.input_tokens).attributes['hisho.llm.cost_usd']).toBeGreaterThan(0);
    }
    expect(byInput(USAGE.tool.input_tokens).name).toBe('chat claude-opus-5-5');
    // The model's HTTP call is a child of its `chat` span.
    expect(trace.some((s) => s.kind === 3 && s.parentSpanId === chats[0]!.spanId)).toBe(true);

    // The tool, with the rules' decisions.
    const tool = trace.find((s) => s.name === 'execute_tool create_task')!;
    expect(ancestors(trace, tool)).toContain(invoke);
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'create_task',
      // 「明日」 is resolved to a date: the Guardian's MODIFY.
      'hisho.guardian.verdict': 'MODIFY',
      'hisho.gate.decision': 'ALLOWED',
      'hisho.tool.status': 'ok',
    });
    expect(typeof tool.attributes['hisho.guardian.reason_code']).toBe('string');
    // Its ChatWork call and database statements are inside it.
    expect(trace.some((s) => s.kind === 3 && ancestors(trace, s).includes(tool))).toBe(true);
    expect(trace.some((s) => s.scope.includes('pg') && ancestors(trace, s).includes(invoke))).toBe(true);

    // Nothing the person wrote, no name, no tool argument, no reply text, anywhere.
    const text = allAttributes(receiver.spans);
    for (const word of PRIVATE) expect(text).not.toContain(word);
    expect(invoke.resource['service.name']).toBe('hisho');
    expect(proc.output()).toContain('tracing: spans are exported');
  }, 90000);

  it('opted in: message, arguments, reply redacted (http/protobuf); an answer links to its question', async () => {
    const { receiver, url } = await start({
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_SERVICE_NAME: 'hisho-tracing-test',
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
    });
    const d = await mention(url, 5302, `${ASK}。電話は090-1234-5678`);
    await waitFor(() => cw.posts.find((p) => p.body.includes(`to=5302-${d.messageId}]`)), 15000, 'reply posted');
    const invoke = await nextTurn(receiver, 'the mention');
    expect(receiver.contentTypes.every((t) => t.startsWith('application/x-protobuf'))).toBe(true);
    expect(invoke.resource['service.name']).toBe('hisho-tracing-test');
    const input = String(invoke.attributes['gen_ai.input.messages']);
    expect(input).toContain('タスクをお願い');
    expect(input).not.toContain('090-1234-5678');
    expect(String(invoke.attributes['gen_ai.output.messages'])).toContain('お願いしたウル');
    const tool = receiver.spans.find((s) => s.traceId === invoke.traceId && s.name === 'execute_tool create_task')!;
    expect(JSON.parse(String(tool.attributes['gen_ai.tool.call.arguments']))).toMatchObject({ title: TASK_TITLE });

    // A question, then its answer: the answer's turn links to the asking turn's trace.
    const q = await mention(url, 5303, '田中さんに議事録をお願いしたいかも、確認して');
    await waitFor(() => cw.posts.find((p) => p.body.includes(`to=5303-${q.messageId}]`)), 15000, 'question posted');
    const asking = await nextTurn(receiver, 'the question');
    expect(asking.attributes['hisho.decision']).toBe('confirm');
    const a = await mention(url, 5303, 'はい');
    await waitFor(() => cw.posts.find((p) => p.body.includes(`to=5303-${a.messageId}]`)), 15000, 'answer posted');
    const answer = await waitFor(
      () => receiver.spans.find((s) => s.name === 'invoke_agent Hisho' && s.links.length > 0),
      20000,
      "the answer's turn",
    );
    expect(answer.traceId).not.toBe(asking.traceId);
    expect(answer.links[0]!.traceId).toBe(asking.traceId);
    expect(answer.links[0]!.attributes['hisho.link.reason']).toBe('answers_confirmation');
    expect(answer.attributes['hisho.decision']).toBe('executed');
  }, 120000);
});
