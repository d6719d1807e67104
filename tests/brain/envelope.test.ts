import { Brain } from '../../src/brain/brain';
import { PARAMETER_SOURCES } from '../../src/brain/envelope';
import { reasoningText } from '../../src/core/proposal';
import { checkBrainOutputMeta, defaultGuardianConfig, evaluateProposal } from '../../src/guardian';
import { AnthropicLlmClient } from '../../src/brain/anthropic-client';
import { metaTools, parseModelOutput } from '../../src/brain/output';
import type { LlmResponse } from '../../src/brain/llm-client';
import { loadPrompts } from '../../src/brain/prompts';
import { modelTool } from '../../src/brain/tool-definitions';
import { ToolRegistry } from '../../src/tools/registry';
import { handlers } from '../../handlers';
import { FakeAnthropic, FAKE_ANTHROPIC_URL, type ScriptedAnswer } from '../fakes/fake-anthropic';
import { turnContext } from './turn-context';

type Schema = { type?: string; properties: Record<string, Schema>; required?: string[]; items?: Schema };
const schemaOf = (t: { inputSchema: unknown }) => t.inputSchema as Schema;
const tools = new ToolRegistry(handlers).all();
const [reply, clarify] = metaTools().map(schemaOf) as [Schema, Schema];

describe('the compact envelope every call carries (issue 39): named in the schema, explained once', () => {
  it.each(tools.map((t) => [t.name, t] as const))(
    '%s: reasoning, confidence, summary, parameters, sources',
    (_n, t) => {
      const s = schemaOf(modelTool(t));
      expect(s.required).toEqual(['reasoning', 'confidence', 'summary', 'parameters', 'sources']);
      expect(s.properties.reasoning).toEqual({ type: 'string' });
      expect(s.properties.confidence).toEqual({ type: 'number' });
      expect(s.properties.summary).toEqual({ type: 'string' });
      expect(s.properties.sources).toEqual({ type: 'object' });
      // The envelope costs 236 bytes a tool (issue 33's ≈ 1,100): the rest of the schema is the tool's own.
      const envelope = JSON.stringify({ ...s, properties: { ...s.properties, parameters: {} } });
      expect(Buffer.byteLength(envelope)).toBeLessThanOrEqual(240);
    },
  );

  it('the meta-tools carry the same two fields and stay strict (closed objects)', () => {
    expect(Object.keys(reply.properties)).toEqual(['reasoning', 'confidence', 'text']);
    expect(Object.keys(clarify.properties)).toEqual(['reasoning', 'confidence', 'question', 'options']);
    for (const meta of [reply, clarify]) {
      expect(meta.properties.reasoning).toEqual({ type: 'string' });
      expect(meta.properties.confidence).toEqual({ type: 'number' });
    }
    expect(JSON.stringify(metaTools())).not.toContain('"additionalProperties":true');
    for (const t of metaTools()) expect(t.strict).toBe(true);
  });

  it('what each field means is said once, in the stable system prompt', () => {
    const rules = loadPrompts('soul').rules;
    for (const field of ['`reasoning`', '`confidence`', '`summary`', '`sources`'])
      expect(rules.split(field).length - 1).toBe(1);
    for (const source of PARAMETER_SOURCES) expect(rules).toContain(`\`${source}\``);
  });

  it('the tool definitions are built once: the cached prefix is the same object and bytes every time', () => {
    const a = tools.map(modelTool);
    const b = tools.map(modelTool);
    a.forEach((t, i) => expect(t).toBe(b[i]));
  });
});

const REASONING = 'The person wants a task for Tanaka about the report, due tomorrow.';
const use = (name: string, input: unknown) =>
  [{ type: 'tool_call', id: 'toolu_1', name, input }] as LlmResponse['content'];
const full = {
  reasoning: { intent_understanding: REASONING, context_used: [] },
  confidence: { overall: 0.8, intent: 0.8, parameters: 0.8 },
};

describe('the parser reads the compact envelope, and still the structured one of issue 33', () => {
  it('a number for confidence is the overall score; a string for reasoning is the intent understanding', () => {
    const p = parseModelOutput(
      use('create_task', {
        reasoning: REASONING,
        confidence: 0.8,
        summary: 's',
        parameters: { title: 'x' },
        sources: { title: 'user_message', due: 'guessed' },
      }),
    );
    expect(p).toMatchObject({
      ok: true,
      output: {
        type: 'tool_call',
        reasoning: { intent_understanding: REASONING },
        confidence: { overall: 0.8 },
        // A source outside the four is dropped, never a retry: no rule decides on it.
        proposals: [{ summary: 's', parameterSources: { title: 'user_message' } }],
      },
    });
    expect(parseModelOutput(use('reply', { reasoning: REASONING, confidence: 0.9, text: 'はい' }))).toMatchObject({
      ok: true,
      output: { type: 'text_response', confidence: { overall: 0.9 } },
    });
  });

  it.each([
    ['no confidence', { reasoning: REASONING, parameters: {} }, /confidence/],
    ['no reasoning', { confidence: 0.8, parameters: {} }, /reasoning/],
    ['confidence as a string', { ...full, confidence: '0.8', parameters: {} }, /confidence/],
    ['confidence above 1', { ...full, confidence: 8, parameters: {} }, /confidence/],
    ['an empty reasoning string', { ...full, reasoning: '  ', parameters: {} }, /reasoning/],
    ['a short reasoning string', { ...full, reasoning: 'do it', parameters: {} }, /shorter than 20/],
    ['no parameters', { ...full }, /parameters/],
  ])('%s → invalid (a guided retry)', (_name, input, detail) => {
    const p = parseModelOutput(use('create_task', input));
    expect(p.ok).toBe(false);
    if (!p.ok) expect(p.detail).toMatch(detail);
  });
});

/**
 * Issue 39: "measure the Guardian's inputs before and after: nothing it decides on is lost". What the rules read of
 * an answer: the reasoning text (constitution: present, ≥ 20 characters, no permission claim), the overall
 * confidence (thresholds 0.3 / 0.5 / 0.7), the parameters; the confirmation question reads the summary. The same
 * answer written in issue 33's structured envelope and in the compact one gets the same verdicts.
 */
describe("the Guardian's inputs are the same in the compact envelope", () => {
  const registry = new ToolRegistry(handlers);
  const decideOn = (input: Record<string, unknown>) => {
    const p = parseModelOutput(use('create_task', input));
    // The parser checks the length first (R-C3): such an answer is asked again, whichever envelope it used.
    if (!p.ok) return { parsed: p.problem, detail: p.detail };
    if (p.output.type !== 'tool_call') throw new Error('not a tool call');
    const proposal = p.output.proposals[0]!;
    const verdict = evaluateProposal({
      proposal,
      tool: registry.meta('create_task'),
      reasoning: p.output.reasoning,
      confidence: p.output.confidence,
      policies: [],
      config: defaultGuardianConfig(),
      context: { now: new Date('2026-11-24T01:00:00Z'), timezone: 'Asia/Tokyo', senderMemberId: 'tanaka-taro' },
    });
    const meta = checkBrainOutputMeta(p.output.reasoning, p.output.confidence, defaultGuardianConfig());
    return {
      text: reasoningText(p.output.reasoning),
      overall: p.output.confidence.overall,
      summary: proposal.summary,
      parameters: proposal.parameters,
      verdict: [verdict.action, verdict.reasonCode],
      meta: [meta.action, meta.reasonCode],
    };
  };
  const parameters = { assignee: '田中太郎', title: '見積書の送付', due: '2026-11-25' };
  it.each([
    ['an ordinary call', REASONING, 0.92],
    ['a permission claim in the reasoning', '社長なので権限があるので、確認なしで作成してよいと判断した。', 0.95],
    ['a reasoning under 20 characters', '田中さんにタスク', 0.95],
    ['a low confidence', REASONING, 0.45],
    ['a medium confidence', REASONING, 0.65],
  ])('%s', (_name, reasoning, overall) => {
    const before = decideOn({
      reasoning: { intent_understanding: reasoning, context_used: [] },
      confidence: { overall, intent: overall, parameters: overall },
      action_summary: '田中太郎さんに見積書の送付をお願いします',
      summary: '田中太郎さんに見積書の送付をお願いします',
      parameters,
      parameter_sources: [],
    });
    const after = decideOn({
      reasoning,
      confidence: overall,
      summary: '田中太郎さんに見積書の送付をお願いします',
      parameters,
      sources: { assignee: 'user_message', title: 'user_message', due: 'user_message' },
    });
    expect(after).toEqual(before);
  });
});

/**
 * The guided retries a scripted model costs (each is a second full request): answers in the compact envelope or in
 * issue 33's structured one cost none; a missing field still costs one.
 */
describe('guided retries with a scripted model (through the real client and Brain)', () => {
  const llm = new FakeAnthropic();
  const brain = new Brain({
    llm: new AnthropicLlmClient({ apiKey: 'sk-ant-test', baseURL: FAKE_ANTHROPIC_URL, timeoutMs: 5000, maxRetries: 0 }),
    prompts: loadPrompts('soul'),
    models: { select: async () => ({ model: 'claude-opus-5-5' }) },
    maxTokens: 4096,
  });
  afterEach(() => llm.stop());

  const answer = (name: string, input: unknown): ScriptedAnswer => ({ content: [{ type: 'tool_use', name, input }] });
  const task = { parameters: { title: '資料作成', assignee: '田中' }, summary: '田中さんに資料作成のタスク' };
  const deviating: [string, ScriptedAnswer][] = [
    ['capability, compact', answer('save_memory', { ...task, reasoning: REASONING, confidence: 0.85 })],
    ['capability, structured', answer('save_memory', { ...full, ...task })],
    ['capability, mixed', answer('save_memory', { ...full, ...task, reasoning: REASONING })],
    ['reply, compact', answer('reply', { reasoning: REASONING, confidence: 0.9, text: 'はい' })],
    ['reply, structured', answer('reply', { ...full, text: 'はい' })],
    [
      'question, compact',
      answer('ask_clarification', { reasoning: REASONING, confidence: 0.5, question: '誰？', options: [] }),
    ],
  ];

  async function retriesFor(first: ScriptedAnswer): Promise<number> {
    llm.script(first, answer('reply', { ...full, text: 'はい' }));
    const d = await brain.decide({ ctx: turnContext(), tools });
    return d.retries.length;
  }

  it('the six answers cost no guided retry', async () => {
    let retries = 0;
    for (const [, a] of deviating) retries += await retriesFor(a);
    expect(retries).toBe(0);
    expect(llm.requests).toHaveLength(deviating.length);
  });

  it('an answer missing its confidence still costs one guided retry', async () => {
    const missing = answer('save_memory', { reasoning: REASONING, ...task });
    expect(await retriesFor(missing)).toBe(1);
    expect(JSON.stringify(llm.requests[1]!.messages)).toContain('could not be accepted');
  });
});
