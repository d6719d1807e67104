import { replyCall, toolCall, type ScriptedAnswer } from '../tests/fakes/anthropic-sse';
import { hasToolResult, lastUserText, type MessagesRequest } from '../tests/fakes/anthropic-server';

/** Every normal answer of the bench's model carries this and the message's token, so an apology is told apart. */
export const ANSWER_MARKER = 'ベンチ応答';
/** The company tool (MCP) a message 「共有フォルダの <path>.txt を読んで」 gets called (`BENCH_PHASES=mcp`). */
export const MCP_READ = 'files__read_text_file';
/** The token every bench message carries (`#k123`); the model repeats it, so each reply names its message. */
export const TOKEN_RE = /#k(\d+)/g;

/** The last token in a text (the current message comes after the context block; tool results after that). */
export function lastToken(text: string): string | null {
  let m: RegExpExecArray | null;
  let last: string | null = null;
  TOKEN_RE.lastIndex = 0;
  while ((m = TOKEN_RE.exec(text))) last = m[1]!;
  return last;
}

/**
 * The bench's zero-latency model, answered over HTTP by tests/fakes/anthropic-server.ts so the service's
 * SDK serialises and parses as in production. A message with 「タスク」 gets a confident create_task call
 * (executed at once), one with 「確認」 a hesitant one (the Guardian asks first), anything else a reply
 * (a critique or a conversation summary gets its own tool's answer);
 * after a tool result it replies. Replies carry {@link ANSWER_MARKER} and the message's token. A tool
 * that is not offered to the sender is not proposed (as a real model would not).
 */
export function benchModel(req: MessagesRequest): ScriptedAnswer {
  const tools = new Set((req.tools ?? []).map((t) => t.name));
  if (tools.has('critique') && !tools.has('reply'))
    return {
      content: [
        {
          type: 'tool_use',
          name: 'critique',
          input: { appropriate: true, risk: 'none', concerns: [], improvement: '' },
        },
      ],
    };
  // The conversation summary (a long-lived room's older messages; background work).
  if (tools.has('write_summary'))
    return {
      content: [
        { type: 'tool_use', name: 'write_summary', input: { summary: '本人が挨拶し、秘書が手伝いを申し出た。' } },
      ],
    };
  const token = lastToken(JSON.stringify(req.messages)) ?? '0';
  // After a tool result it says what happened, as an honest model does: a refused call is not reported as done
  // (the service's reply check would rewrite such a claim, and the rewrite carries no token).
  // A company tool (MCP) read: it says what it read, not that it registered anything.
  if (hasToolResult(req) && JSON.stringify(req.messages.at(-2) ?? '').includes(MCP_READ))
    return replyCall(`${ANSWER_MARKER}: ファイルを読んだウル #k${token}`);
  if (hasToolResult(req))
    return replyCall(
      refused(req) ? `${ANSWER_MARKER}: 登録できなかったウル #k${token}` : `${ANSWER_MARKER}: 登録したウル #k${token}`,
    );
  const text = lastUserText(req);
  const file = /共有フォルダの (\S+\.txt)/.exec(text);
  if (file && tools.has(MCP_READ)) return toolCall(MCP_READ, { path: file[1]! });
  const hesitant = text.includes('確認');
  if ((hesitant || text.includes('タスク')) && tools.has('create_task'))
    return toolCall(
      'create_task',
      { assignee: '田中太郎', title: `資料作成 #k${token}`, due: '明日' },
      { overall: hesitant ? 0.6 : 0.95 },
    );
  return replyCall(`${ANSWER_MARKER}: こんにちはウル！何か手伝えることはあるウル？ #k${token}`);
}

/** Whether the last tool result is an error (a call the rules refused or a handler that failed). */
function refused(req: MessagesRequest): boolean {
  const last = req.messages.at(-1);
  return Array.isArray(last?.content) && (last.content as { is_error?: boolean }[]).some((b) => b.is_error === true);
}
