import type { LlmClient, LlmRequest, LlmResponse } from '../src/brain/llm-client';

const reasoning = {
  intent_understanding: 'The person wants this handled now, as written in the message.',
  context_used: ['message'],
  alternatives_considered: [],
};
const confidence = { overall: 0.95, intent: 0.95, parameters: 0.95 };

/**
 * A zero-latency scripted model for benchmarks: a message containing 「タスク」 gets a create_task call,
 * then a reply after the tool result; anything else gets a reply. Usage mimics a cached prefix.
 */
export class ZeroLatencyLlm implements LlmClient {
  calls = 0;
  lastRequest: LlmRequest | null = null;

  async create(req: LlmRequest): Promise<LlmResponse> {
    this.calls++;
    // The prefix figure is about turns: a self-critique call (its own tool, no `reply`) is not one.
    if (req.tools.some((t) => t.name === 'reply')) this.lastRequest = req;
    const last = req.messages.at(-1)!;
    // The current message is the last text block of the last user turn (the context block comes before it).
    const blocks = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content;
    const text = blocks.filter((b) => b.type === 'text').at(-1)?.text ?? '';
    const afterTool = Array.isArray(last.content) && last.content.some((b) => b.type === 'tool_result');
    let content: LlmResponse['content'];
    if (req.tools.some((t) => t.name === 'write_summary')) {
      // A conversation summary (a background work item, not a turn).
      content = [
        {
          type: 'tool_call',
          id: `toolu_${this.calls}`,
          name: 'write_summary',
          input: { summary: 'あいさつと資料作成のタスクの依頼が続いている。' },
        },
      ];
    } else if (!afterTool && text.includes('タスク')) {
      content = [
        {
          type: 'tool_call',
          id: `toolu_${this.calls}`,
          name: 'create_task',
          input: {
            reasoning: { ...reasoning, tool_selection_reason: 'create_task records the request.' },
            confidence,
            action_summary: '田中太郎さんにタスクを作ります。',
            parameters: { assignee: '田中太郎', title: '資料作成', due: '明日' },
            parameter_sources: [],
          },
        },
      ];
    } else {
      content = [
        {
          type: 'tool_call',
          id: `toolu_${this.calls}`,
          name: 'reply',
          input: {
            reasoning: { ...reasoning, no_tool_reason: 'Conversation only.', response_strategy: 'Answer briefly.' },
            confidence,
            text: afterTool
              ? 'タスクを作ったウル！ほかにあれば言ってほしいウル🐺'
              : 'こんにちはウル！何か手伝えることはあるウル？',
          },
        },
      ];
    }
    return {
      content,
      stopReason: 'tool_calls',
      model: req.model,
      durationMs: 0,
      usage: { inputTokens: 300, outputTokens: 80, cacheWriteTokens: 0, cacheReadTokens: 2500 },
    };
  }
}
