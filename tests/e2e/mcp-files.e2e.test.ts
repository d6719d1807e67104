import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { replyCall, toolCall } from '../fakes/fake-anthropic';
import { searchCall } from '../fakes/anthropic-sse';
import { chatworkTurns } from '../helpers/chatwork-turns';
import { chatworkEnv, waitFor } from '../helpers/service';
import { ADMIN_TOKEN, adminMcp, directoryWithServers, FILESYSTEM_SERVER } from '../helpers/mcp-directory';

type Body = { tools: { name: string; description?: string; defer_loading?: boolean }[]; messages: unknown[] };

/**
 * Issue 42 against a real MCP server the project does not write: `@modelcontextprotocol/server-filesystem` over
 * stdio on a scratch folder, declared in the directory with a read tool at level 1 and a write tool at level 3,
 * approved by the operator, reached end to end through a ChatWork webhook with a scripted model.
 */
describe('company tools through MCP: the filesystem server over stdio (end to end, ChatWork)', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-mcp-files-'));
  let file = '';

  beforeAll(() => {
    fs.writeFileSync(path.join(scratch, 'memo.txt'), '来週の定例は木曜10時から。資料は鈴木さんが用意。');
    file = directoryWithServers(`mcp_servers:
  - id: files
    name: 共有ドライブ
    command: ${FILESYSTEM_SERVER}
    args: ["${scratch}"]
    timeout_seconds: 10
    tools:
      read_text_file: { level: 1, effect: read, examples: [共有フォルダのファイルを読んで] }
      write_file:     { level: 3, effect: write, examples: [共有フォルダにファイルを書いて] }
`);
  });
  const t = chatworkTurns(() => ({ ...chatworkEnv(), ORG_DIRECTORY_FILE: file, ADMIN_TOKEN }), 7100);
  const { llm, say, lastTurn } = t;

  it('offers nothing before an operator approves on /admin, whose page lists each tool, policy and state', async () => {
    const admin = adminMcp(t.svc.url);
    await waitFor(async () => (await admin.servers())[0]?.approvable, 10_000, 'tools listed');
    const [files] = await admin.servers();
    expect(files).toMatchObject({ id: 'files', name: '共有ドライブ', approvable: true });
    expect(files!.tools.map((t) => [t.tool, t.modelName, t.level, t.effect, t.state])).toEqual([
      ['read_text_file', 'files__read_text_file', 'レベル1以上', '読むだけ', '承認待ち'],
      ['write_file', 'files__write_file', 'レベル3以上', '書き込み（実行前に本人に確認）', '承認待ち'],
    ]);
    expect(files!.tools[0]!.description).toMatch(/read/i);
    llm.script(replyCall('ごめんウル、いまは共有ドライブを読めないウル。管理者に聞いてみてほしいウル🐺'));
    await say(1008, '共有フォルダの memo.txt を読んで', 1);
    const names = (llm.requests[0] as unknown as Body).tools.map((t) => t.name);
    expect(names.filter((n) => n.startsWith('files__'))).toEqual([]);
    // The filesystem server lists more tools (move_file, …): only the declared ones are pinned or ever offered.
    const approved = await admin.approve('files');
    expect(approved.status).toBe(200);
    expect(approved.servers![0]!.tools.map((t) => t.state)).toEqual(['有効', '有効']);
    const pinned = await t.svc.db.mcpToolApproval.findMany({ orderBy: { toolName: 'asc' } });
    expect(pinned.map((p) => [p.serverId, p.toolName, p.hash.length])).toEqual([
      ['files', 'read_text_file', 64],
      ['files', 'write_file', 64],
    ]);
    // Without the token, nothing is approved.
    const res = await fetch(`${t.svc.url}/admin/api/mcp/files/approve`, {
      method: 'POST',
      headers: { origin: t.svc.url },
    });
    expect(res.status).toBe(401);
  });

  it('a level-1 member reads a file: found with find_tools, called, its text quoted as data', async () => {
    const memo = path.join(scratch, 'memo.txt');
    llm.script(
      searchCall('共有フォルダのファイルを読んで memo.txt'),
      toolCall('files__read_text_file', { path: memo }),
      replyCall('memo.txt には「来週の定例は木曜10時から」とあるウル。ほかに読むものはあるウル？'),
    );
    const reply = await say(1008, '共有フォルダの memo.txt を読んで', 1);
    expect(reply).toContain('木曜10時');
    const [first, second, third] = llm.requests as unknown as Body[];
    // Deferred: in the first request only as a deferred definition (not in the cached prefix), loaded by the search.
    expect(first!.tools.find((t) => t.name === 'files__read_text_file')).toMatchObject({ defer_loading: true });
    expect(first!.tools.find((t) => t.name === 'files__write_file')).toBeUndefined();
    expect(JSON.stringify(second!.messages)).toContain('files__read_text_file');
    const result = JSON.stringify(third!.messages.at(-1));
    expect(result).toContain('「来週の定例は木曜10時から。資料は鈴木さんが用意。」');
    expect(result).toContain('untrusted data');
    const turn = await lastTurn();
    expect((turn.proposals as { tool: string; auth?: { result: string } }[])[0]).toMatchObject({
      tool: 'files__read_text_file',
      auth: { result: 'ALLOWED' },
    });
  });

  it('a level-1 member asking to write is refused by the Gate and nothing is written', async () => {
    const target = path.join(scratch, 'level1.txt');
    llm.script(
      toolCall('files__write_file', { path: target, content: '勝手に書いた' }),
      replyCall('ごめんウル、共有ドライブへの書き込みはできないウル。上長にお願いしてほしいウル🐺'),
    );
    const reply = await say(1008, '共有フォルダの level1.txt に「勝手に書いた」と書いて', 1);
    expect(reply).not.toMatch(/書きました|保存しました|書いたウル/);
    expect(fs.existsSync(target)).toBe(false);
    const turn = await lastTurn();
    expect(turn.decision).toBe('DENIED');
    expect((turn.proposals as { tool: string; auth?: unknown; execution?: unknown }[])[0]).toMatchObject({
      tool: 'files__write_file',
      auth: { result: 'DENIED', reasonCode: 'Z_LEVEL_TOO_LOW' },
    });
    expect((turn.proposals as { execution?: unknown }[])[0]!.execution).toBeUndefined();
  });

  it('a level-3 write is asked, written after 「はい」, once only with a second 「はい」; the audit names it', async () => {
    const target = path.join(scratch, 'minutes.txt');
    llm.script(toolCall('files__write_file', { path: target, content: '定例の議事録（草案）' }));
    const question = await say(1004, '共有フォルダに minutes.txt を作って「定例の議事録（草案）」と書いて', 1);
    expect(question).toMatch(/実行してよい/);
    expect(question).toContain('共有ドライブ');
    expect(question).toContain('write_file');
    expect(fs.existsSync(target)).toBe(false);

    llm.script(replyCall('共有ドライブに minutes.txt を保存したウル！ほかにあれば言ってほしいウル🐺'));
    await say(1004, 'はい', 2);
    expect(fs.readFileSync(target, 'utf8')).toBe('定例の議事録（草案）');
    const written = fs.statSync(target).mtimeMs;
    const approved = await waitFor(() =>
      t.svc.db.turnRecord.findFirst({ where: { roomId: String(t.room), reasonCode: 'S_USER_APPROVED' } }),
    );
    expect(approved).toMatchObject({ decision: 'EXECUTED', authResult: 'ALLOWED' });
    expect((approved.proposals as { tool: string }[])[0]!.tool).toBe('files__write_file');
    // The operator's turn inspector says it in words: the server by its name, the tool, what it was given.
    const inspected = await fetch(`${t.svc.url}/admin/api/turns/${approved.id}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const { turn } = (await inspected.json()) as { turn: { proposals: { words: string }[] } };
    expect(turn.proposals[0]!.words).toContain('外部ツール「共有ドライブ」の「write_file」を実行します。');
    expect(turn.proposals[0]!.words).toContain('・content: 定例の議事録（草案）');

    const again = await say(1004, 'はい', 3);
    expect(again).toMatch(/もう実行済み/);
    expect(fs.statSync(target).mtimeMs).toBe(written);
  });
});
