import { Brain, BrainFailure } from '../../src/brain/brain';
import { AnthropicLlmClient, toAnthropicRequest } from '../../src/brain/anthropic-client';
import { nextStep } from '../../src/brain/continuation';
import type { LlmClient, LlmRequest, LlmResponse } from '../../src/brain/llm-client';
import { loadPrompts } from '../../src/brain/prompts';
import { buildRequest } from '../../src/brain/request';
import { modelTool } from '../../src/brain/tool-definitions';
import { CORE_TOOLS, MAX_SEARCHES, ToolIndex, type SearchDocument } from '../../src/brain/tool-search';
import { ToolRegistry } from '../../src/tools/registry';
import { handlers } from '../../handlers';
import { FakeAnthropic, FAKE_ANTHROPIC_URL, replyCall, toolCall } from '../fakes/fake-anthropic';
import { searchCall, toolSearchProblem } from '../fakes/anthropic-sse';
import { turnContext } from './turn-context';

const registry = new ToolRegistry(handlers);
const all = registry.all();
const docs: SearchDocument[] = all
  .filter((t) => !CORE_TOOLS.includes(t.name))
  .map((t) => ({ tool: modelTool(t), examples: t.triggerExamples, requiredLevel: t.requiredLevel }));

describe('the tool index (Hisho’s own search)', () => {
  const index = new ToolIndex(docs);
  const top = (q: string, level = 6) => index.search(q, { level }).map((h) => h.name);

  it.each([
    ['山口さんに月末までに在庫表の更新を頼みたい', 'create_task'],
    ['その資料の締め切り、水曜日に延ばしてくれる？', 'change_task'],
    ['全員に明日は在宅勤務の日だと知らせて', 'announce'],
    ['経理課のメンバーの抱えてるタスクを見たい', 'team_overview'],
    ['健康診断の受け方は社内規程でどうなってる？', 'search_knowledge'],
    ['昨日頼んだリマインド、やっぱりやめて', 'cancel_reminder'],
    ['この目標の進捗を報告するね：5件中2件まで来た', 'report_goal_progress'],
    ['assign the budget review to Sato, due next Tuesday', 'create_task'],
    ['create task', 'create_task'],
  ])('「%s」 finds %s', (query, tool) => {
    expect(top(query)).toContain(tool);
  });

  it('a tool that takes an id from another brings that one along (cancel_reminder → list_reminders)', () => {
    const found = top('明日のリマインドを取り消して');
    expect(found.indexOf('list_reminders')).toBe(found.indexOf('cancel_reminder') + 1);
  });

  it('never returns a tool above the level, nor outside the tools offered', () => {
    expect(top('田中さんに資料作成のタスクをお願いして create_task', 1)).not.toContain('create_task');
    expect(top('チームの状況 team_overview', 2)).not.toContain('team_overview');
    const offered = new Set(['list_reminders']);
    expect(index.search('リマインドを取り消して', { level: 6, allowed: offered }).map((h) => h.name)).toEqual([
      'list_reminders',
    ]);
  });

  it('takes a tool from another source at run time (an MCP server’s), with its level', () => {
    const live = new ToolIndex(docs);
    const expenses: SearchDocument = {
      tool: {
        name: 'expenses_submit_claim',
        description: 'Submit an expense claim (経費精算の申請) with its receipts to the accounting system.',
        inputSchema: { type: 'object', properties: { amount: { type: 'number', description: '金額（円）' } } },
      },
      examples: [],
      requiredLevel: 3,
    };
    expect(live.search('交通費の経費精算を申請して', { level: 6 }).map((h) => h.name)).not.toContain(
      'expenses_submit_claim',
    );
    live.add(expenses);
    expect(live.size).toBe(docs.length + 1);
    expect(live.search('交通費の経費精算を申請して', { level: 3 })[0]!.name).toBe('expenses_submit_claim');
    expect(live.search('交通費の経費精算を申請して', { level: 2 }).map((h) => h.name)).not.toContain(
      'expenses_submit_claim',
    );
  });
});

describe('the search round trip (through the real client, against the fake Messages API)', () => {
  const llm = new FakeAnthropic();
  const prompts = loadPrompts('soul');
  const brain = new Brain({
    llm: new AnthropicLlmClient({ apiKey: 'sk-ant-test', baseURL: FAKE_ANTHROPIC_URL, timeoutMs: 5000, maxRetries: 0 }),
    prompts,
    models: { select: async () => ({ model: 'claude-opus-5-5' }) },
    maxTokens: 4096,
  });
  afterEach(() => llm.stop());
  const ctx = turnContext({
    message: { ...turnContext().message, text: '鈴木さんに金曜までに議事録の清書をお願いして' },
  });

  type Wire = {
    tools: { name: string; defer_loading?: boolean; cache_control?: unknown }[];
    tool_choice: unknown;
    messages: { role: string; content: unknown }[];
  };

  it('sends deferred tools, answers find_tools with tool_reference blocks, decides with what it loaded', async () => {
    llm.script(
      {
        content: [
          { type: 'thinking', thinking: '' },
          ...(searchCall('議事録の清書をお願い') as never as { content: [] }).content,
        ],
      },
      toolCall('create_task', { assignee: '鈴木', title: '議事録の清書', due: '2026-11-27' }),
    );
    const d = await brain.decide({ ctx, tools: all });
    const [first, second] = llm.requests as unknown as Wire[];

    // The first request: loaded tools (the cache breakpoint on the last of them), then the deferred ones.
    const names = first!.tools.map((t) => t.name);
    expect(names.slice(0, 7)).toEqual([...[...CORE_TOOLS].sort(), 'find_tools', 'reply', 'ask_clarification']);
    expect(first!.tools.filter((t) => t.cache_control).map((t) => t.name)).toEqual(['ask_clarification']);
    expect(first!.tools.slice(7).every((t) => t.defer_loading === true && !t.cache_control)).toBe(true);
    expect(names).toContain('create_task');

    // The second: the model's search turn as it gave it (thinking block unchanged), then the result that loads tools.
    const [assistant, result] = second!.messages.slice(-2);
    expect(assistant).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: '', signature: 'sig' },
        expect.objectContaining({ type: 'tool_use', name: 'find_tools', input: { query: '議事録の清書をお願い' } }),
      ],
    });
    const content = (result!.content as { type: string; content: { type: string; tool_name: string }[] }[])[0]!;
    expect(content.type).toBe('tool_result');
    expect(content.content[0]).toEqual({ type: 'tool_reference', tool_name: 'create_task' });
    expect(content.content.every((r) => r.type === 'tool_reference')).toBe(true);
    // Same tool_choice, no beta header on either request (deferred loading is part of API 2026-10-21).
    for (const [i, r] of (llm.requests as unknown as Wire[]).entries()) {
      expect(r.tool_choice).toEqual({ type: 'auto' });
      expect(llm.headers[i]!['anthropic-beta']).toBeUndefined();
    }

    expect(d.output).toMatchObject({ type: 'tool_call', proposals: [{ toolName: 'create_task' }] });
    expect(d.searches).toEqual([{ query: '議事録の清書をお願い', found: expect.arrayContaining(['create_task']) }]);
    expect(d.calls.map((c) => c.purpose)).toEqual(['tool_search', 'turn']);
    expect(d.lead).toHaveLength(2);
    expect(d.retries).toEqual([]);

    // The next step keeps the search turns: the call of the loaded tool is valid history for the API.
    const step2 = nextStep([], d, [{ proposalId: 'toolu_x', content: '{"taskId":"t1"}', isError: false }]);
    const wire = toAnthropicRequest(
      buildRequest({ prompts, ctx, tools: all, model: 'm', maxTokens: 1, continuation: step2 }),
    );
    expect(toolSearchProblem(wire as never)).toBeNull();
    const search = wire.messages.findIndex((m) => JSON.stringify(m.content).includes('"find_tools"'));
    const withoutSearch = wire.messages.filter((_, i) => i !== search && i !== search + 1);
    expect(toolSearchProblem({ ...wire, messages: withoutSearch } as never)).toMatch(
      /tool_use of deferred tool create_task before a tool_reference loaded it/,
    );
  });

  it('a search that finds nothing says so in words and loads nothing', async () => {
    llm.script(searchCall('zzqx'), replyCall('それはできないウル。'));
    const d = await brain.decide({ ctx, tools: all });
    const last = (llm.requests[1] as unknown as Wire).messages.at(-1)!;
    expect(last.content).toEqual([
      expect.objectContaining({ type: 'tool_result', content: expect.stringContaining('No tool matches') }),
    ]);
    expect(d.searches).toEqual([{ query: 'zzqx', found: [] }]);
  });

  it(`fails closed after ${MAX_SEARCHES} searches in one decision`, async () => {
    llm.script(...Array.from({ length: MAX_SEARCHES + 1 }, () => searchCall('タスク')));
    const err = await brain.decide({ ctx, tools: all }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BrainFailure);
    expect((err as BrainFailure).calls).toHaveLength(MAX_SEARCHES + 1);
  });

  it('a request that cannot load what an earlier search found (fewer tools) carries the result as words', () => {
    const step = [
      {
        role: 'assistant' as const,
        content: [{ type: 'tool_call' as const, id: 's1', name: 'find_tools', input: {} }],
      },
      {
        role: 'user' as const,
        content: [
          { type: 'tool_result' as const, callId: 's1', content: 'Loaded: create_task', loads: ['create_task'] },
        ],
      },
    ];
    const wire = toAnthropicRequest(
      buildRequest({ prompts, ctx, tools: [], model: 'm', maxTokens: 1, continuation: step }),
    );
    expect(wire.messages.at(-1)!.content).toEqual([
      { type: 'tool_result', tool_use_id: 's1', content: 'Loaded: create_task' },
    ]);
  });
});

describe('a deferred tool the model calls without having found it', () => {
  it('is asked again, told to find it first (a request calling an unloaded tool is not one to send)', async () => {
    const requests: LlmRequest[] = [];
    const answers: LlmResponse['content'][] = [
      [
        {
          type: 'tool_call',
          id: 't1',
          name: 'create_task',
          input: {
            reasoning: 'The person wants a task created now.',
            confidence: 0.9,
            summary: 's',
            parameters: { title: 'x' },
            sources: {},
          },
        },
      ],
      [
        {
          type: 'tool_call',
          id: 't2',
          name: 'reply',
          input: { reasoning: 'I answer in words after the correction.', confidence: 0.9, text: 'はい' },
        },
      ],
    ];
    const llm: LlmClient = {
      create: async (req) => {
        requests.push(req);
        return {
          content: answers.shift()!,
          stopReason: 'tool_calls',
          model: 'm',
          durationMs: 0,
          usage: { inputTokens: 1, outputTokens: 1, cacheWriteTokens: 0, cacheReadTokens: 0 },
        };
      },
    };
    const brain = new Brain({
      llm,
      prompts: loadPrompts('soul'),
      models: { select: async () => ({ model: 'm' }) },
      maxTokens: 100,
    });
    const d = await brain.decide({ ctx: turnContext(), tools: all });
    expect(d.retries).toEqual(['invalid: create_task is not loaded: find it with find_tools first']);
    expect(d.output.type).toBe('text_response');
    expect(JSON.stringify(requests[1]!.messages)).toContain('find it with find_tools first');
  });
});
