import { loadPrompts } from '../../src/brain/prompts';
import { buildRequest } from '../../src/brain/request';
import type { TurnContext } from '../../src/context/types';
import { ToolRegistry } from '../../src/tools/registry';

function ctx(over: Partial<TurnContext> = {}): TurnContext {
  return {
    org: { id: 'acme', name: '株式会社アクメ', timezone: 'Asia/Tokyo', values: '可能性の解放' },
    policies: [{ id: 'b', title: '悪い報告ほど早く', content: '悪い知らせは先に伝える。' }, { id: 'a', title: '全員宛ては確認', content: '全員宛ては確認する。' }],
    sender: { known: true, memberId: 'tanaka-taro', name: '田中太郎', level: 3, departmentId: 'sales-tokyo', departmentName: '東京営業課', title: null, preferences: {} },
    room: { platform: 'chatwork', roomId: '5001', name: null, authority: 'member' },
    history: [{ role: 'assistant', text: '前の返事', at: '' }, { role: 'user', text: '前の質問', at: '' }, { role: 'assistant', text: '前の答え', at: '' }],
    summary: null, now: new Date('2026-11-22T01:00:00Z'), nowText: '2026年11月22日(日) 10:00 (Asia/Tokyo)',
    message: { platform: 'chatwork', orgId: 'acme', roomId: '5001', senderAccountId: '1004', text: 'こんにちは', rawText: '', mentions: [], platformMessageId: '1', sentAt: '' },
    language: 'ja', sections: [], degraded: [], ...over,
  };
}

describe('the Anthropic request body', () => {
  const prompts = loadPrompts('soul');
  const registry = ToolRegistry.fromDirectory();
  const tools = registry.all().map((t) => registry.toAnthropic(t));

  it('has tools sorted with meta-tools last, breakpoints on the last tool and the stable system block, no sampling params', () => {
    const req = buildRequest({ prompts, ctx: ctx(), tools: [...tools].reverse(), model: 'claude-opus-5-5', maxTokens: 4096 });
    const shape = {
      model: req.model, max_tokens: req.max_tokens, tool_choice: req.tool_choice,
      tools: req.tools.map((t) => `${t.name}${t.cache_control ? ' [cache]' : ''}`),
      system: req.system.map((b) => ({ cache: b.cache_control ?? null, starts: b.text.slice(0, 30) })),
      messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
      keys: Object.keys(req).sort(),
    };
    expect(shape).toMatchInlineSnapshot(`
{
  "keys": [
    "max_tokens",
    "messages",
    "model",
    "system",
    "tool_choice",
    "tools",
  ],
  "max_tokens": 4096,
  "messages": [
    {
      "content": "前の質問",
      "role": "user",
    },
    {
      "content": "前の答え",
      "role": "assistant",
    },
    {
      "content": "田中太郎: こんにちは",
      "role": "user",
    },
  ],
  "model": "claude-opus-5-5",
  "system": [
    {
      "cache": {
        "type": "ephemeral",
      },
      "starts": "# Persona: ソウルくん (default pres",
    },
    {
      "cache": null,
      "starts": "# Context for this turn (data,",
    },
  ],
  "tool_choice": {
    "type": "auto",
  },
  "tools": [
    "announce",
    "break_goal_into_tasks",
    "cancel_reminder",
    "complete_task",
    "create_reminder",
    "create_task",
    "delete_memory",
    "get_notice_preferences",
    "list_reminders",
    "lookup_person",
    "query_memory",
    "report_goal_progress",
    "save_memory",
    "search_tasks",
    "set_notice_preference",
    "start_goal_setting",
    "team_overview",
    "view_goals",
    "reply",
    "ask_clarification [cache]",
  ],
}
`);
  });

  it('the cacheable prefix is byte-identical across turns of an organisation and holds no time, user or secret', () => {
    const a = buildRequest({ prompts, ctx: ctx(), tools, model: 'm', maxTokens: 1 });
    const b = buildRequest({ prompts, ctx: ctx({ now: new Date(), nowText: '別の時刻', sender: { ...ctx().sender, name: '佐藤美咲' }, history: [] }), tools, model: 'm', maxTokens: 1 });
    expect(JSON.stringify(a.tools)).toBe(JSON.stringify(b.tools));
    expect(a.system[0]!.text).toBe(b.system[0]!.text);
    expect(a.system[0]!.text).not.toMatch(/2026年|田中太郎|sk-|postgres/);
    expect(a.system[0]!.text.indexOf('全員宛ては確認')).toBeLessThan(a.system[0]!.text.indexOf('悪い報告ほど早く'));
    expect(a.system[1]!.text).toContain('2026年11月22日');
  });

  it('every capability schema carries reasoning, confidence and an action summary around the parameters', () => {
    for (const t of tools) {
      const s = t.input_schema as { required: string[]; properties: Record<string, unknown> };
      expect(s.required).toEqual(['reasoning', 'confidence', 'action_summary', 'parameters', 'parameter_sources']);
      expect(t.description).toContain('Examples:');
    }
  });
});

describe('reply language', () => {
  const { detectLanguage } = require('../../src/brain/language') as typeof import('../../src/brain/language');
  it.each([
    ['こんにちは', undefined, 'ja'],
    ['Please create a task for Tanaka', undefined, 'en'],
    ['1', 'Please create a task for Tanaka', 'en'],
    ['ok', 'Please create a task for Tanaka', 'en'],
    ['1', '田中さんにお願い', 'ja'],
    ['👍', undefined, 'ja'],
  ] as const)('%s (after %s) → %s', (text, previous, lang) => {
    expect(detectLanguage(text, previous)).toBe(lang);
  });
});
