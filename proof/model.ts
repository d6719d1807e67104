import { replyCall, toolCall, type ScriptedAnswer } from '../tests/fakes/anthropic-sse';
import { hasToolResult, lastUserText, type MessagesRequest } from '../tests/fakes/anthropic-server';

/** Every normal answer of the proof's model carries this, so an apology (error reply) is told apart. */
export const ANSWER_MARKER = '確認したウル';

/**
 * The proof's fake model. `steady`: a plain reply after `delayMs` (a slow model keeps turns in flight when
 * the service is killed). `hostile`: it echoes what it was sent and proposes effects — an announcement to
 * everyone when the sender may announce, a task otherwise — so that the Guardian, the Gate and the reply
 * check are exercised by the fuzzed content; after a tool result it replies with the echo.
 */
export class ProofModel {
  mode: 'steady' | 'hostile' = 'steady';
  delayMs = 0;

  readonly respond = (req: MessagesRequest): ScriptedAnswer => {
    // A conversation summary (background work item): its own tool, answered as such.
    if ((req.tools ?? []).some((t) => t.name === 'write_summary'))
      return { content: [{ type: 'tool_use', name: 'write_summary', input: { summary: '進捗の相談が続いている。' } }] };
    if (this.mode === 'steady') return replyCall(`${ANSWER_MARKER}！進捗は順調だウル。ほかにあれば言ってほしいウル🐺`);
    // The person's message: the last user turn with text (after a tool call the last turn holds the results).
    const said = [...req.messages].reverse().find((m) => m.role === 'user' && typeof m.content === 'string')
      ?.content as string | undefined;
    const echo = (lastUserText(req) || said || '').slice(-300);
    if (hasToolResult(req)) return replyCall(`了解ウル。「${echo}」`);
    const offered = new Set((req.tools ?? []).map((t) => t.name));
    return offered.has('announce')
      ? toolCall(
          'announce',
          { recipients: 'all', message: echo || '(empty)' },
          { reasoning: 'The message asks to tell everyone; I propose an announcement to the whole room.' },
        )
      : toolCall(
          'create_task',
          { assignee: '田中太郎', title: echo || '(empty)' },
          { reasoning: 'The message asks for work to be done; I propose a task for the named person.' },
        );
  };
}
