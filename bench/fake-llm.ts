import type { LlmClient, LlmMessage, LlmRequest, LlmResponse } from '../src/brain/llm-client';

const reasoning = 'The person wants this handled now, as written in the message.';
const confidence = 0.95;

/** Whether a deferred tool of the request was loaded by a tool search in its messages. */
function loaded(messages: readonly LlmMessage[], name: string): boolean {
  return messages.some(
    (m) => typeof m.content !== 'string' && m.content.some((p) => p.type === 'tool_result' && p.loads?.includes(name)),
  );
}

/**
 * A zero-latency scripted model for benchmarks: a message containing 「タスク」 gets a create_task call (after a
 * `find_tools` search when create_task is deferred, as a model must), then a reply after the tool result; anything
 * else gets a reply. Usage mimics a cached prefix.
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
    const afterTool =
      Array.isArray(last.content) && last.content.some((b) => b.type === 'tool_result' && !b.loads?.length);
    const task = req.tools.find((t) => t.name === 'create_task');
    const first = (req.messages.find((m) => m.role === 'user' && typeof m.content !== 'string') ?? last).content;
    const asked = typeof first === 'string' ? first : (first.filter((b) => b.type === 'text').at(-1)?.text ?? '');
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
    } else if (!afterTool && task?.deferred && text.includes('タスク') && !loaded(req.messages, 'create_task')) {
      content = [{ type: 'tool_call', id: `toolu_${this.calls}`, name: 'find_tools', input: { query: 'create task' } }];
    } else if (!afterTool && asked.includes('タスク')) {
      content = [
        {
          type: 'tool_call',
          id: `toolu_${this.calls}`,
          name: 'create_task',
          input: {
            reasoning: `${reasoning} create_task records the request.`,
            confidence,
            summary: '田中太郎さんにタスクを作ります。',
            parameters: { assignee: '田中太郎', title: '資料作成', due: '明日' },
            sources: { assignee: 'user_message', title: 'user_message', due: 'user_message' },
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
            reasoning: `${reasoning} Conversation only: answer briefly.`,
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
