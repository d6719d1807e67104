import { Brain } from '../../src/brain/brain';
import { PARAMETER_SOURCES } from '../../src/brain/envelope';
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

describe('the envelope every capability call carries is in its schema (issue 33)', () => {
  it.each(tools.map((t) => [t.name, t] as const))(
    '%s: reasoning, confidence, summary, parameters, sources',
    (_n, t) => {
      const s = schemaOf(modelTool(t));
      expect(s.required).toEqual(['reasoning', 'confidence', 'action_summary', 'parameters', 'parameter_sources']);
      const r = s.properties.reasoning!;
      expect(Object.keys(r.properties)).toEqual([
        'intent_understanding',
        'context_used',
        'tool_selection_reason',
        'alternatives_considered',
      ]);
      // Required inside: what the parser cannot do without (the rest is read when given).
      expect(r.required).toEqual(['intent_understanding']);
      // The fields that mean the same have the same names and shapes as in `reply` and `ask_clarification`.
      for (const meta of [reply, clarify]) {
        for (const shared of ['intent_understanding', 'context_used'])
          expect(r.properties[shared]).toEqual(meta.properties.reasoning!.properties[shared]);
        expect(s.properties.confidence!.properties).toEqual(meta.properties.confidence!.properties);
      }
      expect(s.properties.confidence!.required).toEqual(['overall']);
      expect(s.properties.action_summary).toEqual({ type: 'string' });
      expect(s.properties.parameter_sources!.items!.properties.source).toEqual({ enum: [...PARAMETER_SOURCES] });
    },
  );

  it('the meta-tools keep their own reasoning fields and stay strict (closed objects)', () => {
    expect(Object.keys(reply.properties.reasoning!.properties)).toEqual([
      'intent_understanding',
      'context_used',
      'no_tool_reason',
      'response_strategy',
    ]);
    expect(Object.keys(clarify.properties.reasoning!.properties)).toEqual([
      'intent_understanding',
      'context_used',
      'ambiguity_detected',
      'possible_interpretations',
    ]);
    expect(JSON.stringify(metaTools())).not.toContain('"additionalProperties":true');
    for (const t of metaTools()) expect(t.strict).toBe(true);
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

describe('the parser reads the two common deviations as what they mean, and never a missing field', () => {
  it('a bare number for confidence is the overall score; a string for reasoning is the intent understanding', () => {
    const p = parseModelOutput(
      use('create_task', { reasoning: REASONING, confidence: 0.8, parameters: { title: 'x' }, action_summary: 's' }),
    );
    expect(p).toMatchObject({
      ok: true,
      output: { type: 'tool_call', reasoning: { intent_understanding: REASONING }, confidence: { overall: 0.8 } },
    });
    expect(parseModelOutput(use('reply', { reasoning: REASONING, confidence: 0.9, text: 'はい' }))).toMatchObject({
      ok: true,
      output: { type: 'text_response', confidence: { overall: 0.9 } },
    });
  });

  it.each([
    ['no confidence', { reasoning: full.reasoning, parameters: {} }, /confidence/],
    ['no reasoning', { confidence: full.confidence, parameters: {} }, /reasoning/],
    ['confidence as a string', { ...full, confidence: '0.8', parameters: {} }, /confidence/],
    ['confidence above 1', { ...full, confidence: 8, parameters: {} }, /confidence/],
    ['an empty reasoning string', { ...full, reasoning: '  ', parameters: {} }, /intent_understanding/],
    ['a short reasoning string', { ...full, reasoning: 'do it', parameters: {} }, /shorter than 20/],
    ['no parameters', { ...full }, /parameters/],
  ])('%s → invalid (a guided retry)', (_name, input, detail) => {
    const p = parseModelOutput(use('create_task', input));
    expect(p.ok).toBe(false);
    if (!p.ok) expect(p.detail).toMatch(detail);
  });
});

/**
 * The measurement behind the parser's decision: the guided retries a scripted model costs when it deviates in the
 * two common ways (each retry is a second full request). Before the parser read them, each of the six deviating
 * answers below cost one; a missing field still costs one.
 */
describe('guided retries with a scripted model that deviates (through the real client and Brain)', () => {
  const llm = new FakeAnthropic();
  const brain = new Brain({
    llm: new AnthropicLlmClient({ apiKey: 'sk-ant-test', baseURL: FAKE_ANTHROPIC_URL, timeoutMs: 5000, maxRetries: 0 }),
    prompts: loadPrompts('soul'),
    models: { select: async () => ({ model: 'claude-opus-5-5' }) },
    maxTokens: 4096,
  });
  afterEach(() => llm.stop());

  const answer = (name: string, input: unknown): ScriptedAnswer => ({ content: [{ type: 'tool_use', name, input }] });
  const task = { parameters: { title: '資料作成', assignee: '田中' }, action_summary: '田中さんに資料作成のタスク' };
  const deviating: [string, ScriptedAnswer][] = [
    ['capability, bare confidence', answer('create_task', { ...full, ...task, confidence: 0.85 })],
    ['capability, string reasoning', answer('create_task', { ...full, ...task, reasoning: REASONING })],
    ['capability, both', answer('create_task', { ...task, reasoning: REASONING, confidence: 0.85 })],
    ['reply, bare confidence', answer('reply', { ...full, confidence: 0.9, text: 'はい' })],
    ['reply, string reasoning', answer('reply', { ...full, reasoning: REASONING, text: 'はい' })],
    [
      'question, both',
      answer('ask_clarification', { reasoning: REASONING, confidence: 0.5, question: '誰？', options: [] }),
    ],
  ];

  async function retriesFor(first: ScriptedAnswer): Promise<number> {
    llm.script(first, answer('reply', { ...full, text: 'はい' }));
    const d = await brain.decide({ ctx: turnContext(), tools });
    return d.retries.length;
  }

  it('the six deviating answers cost no guided retry', async () => {
    let retries = 0;
    for (const [, a] of deviating) retries += await retriesFor(a);
    expect(retries).toBe(0);
    expect(llm.requests).toHaveLength(deviating.length);
  });

  it('an answer missing its confidence still costs one guided retry', async () => {
    const missing = answer('create_task', { reasoning: full.reasoning, ...task });
    expect(await retriesFor(missing)).toBe(1);
    expect(JSON.stringify(llm.requests[1]!.messages)).toContain('could not be accepted');
  });
});
