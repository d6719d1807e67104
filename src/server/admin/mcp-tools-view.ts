import type { McpToolState, McpToolStatus } from '../../mcp/mcp-tools';

/** What the approval page needs of the company tools (src/mcp/mcp-tools.ts). */
export interface AdminMcp {
  status(): McpToolStatus[];
  approve(serverId: string, approvedBy: string): Promise<boolean>;
}

/** Each state in the operator's words. */
export const MCP_STATE_WORDS: Record<McpToolState, string> = {
  pending: '承認待ち',
  enabled: '有効',
  changed: '変更あり・停止中',
  server_down: 'サーバー停止中',
  missing: 'サーバーにありません',
};

/** What the operator should do about a state (empty: nothing). */
const NEXT_STEP: Record<McpToolState, string> = {
  pending: '説明を読んで問題なければ「承認する」を押してください。',
  enabled: '',
  changed: '説明か入力の形が承認後に変わりました。内容を確かめて、問題なければもう一度承認してください。',
  server_down:
    'サーバーにつながりません。サーバーが動いているか、URL やコマンドを確かめてください（自動で再接続します）。',
  missing: 'ディレクトリに書いたツール名がサーバーにありません。名前の綴りを確かめてください。',
};

/** One server and its declared tools, in words (no codes, no secrets: URLs, headers and commands are not shown). */
export interface McpServerView {
  id: string;
  name: string;
  /** True when approving now would pin something (the server answers and lists a tool not enabled). */
  approvable: boolean;
  tools: {
    tool: string;
    modelName: string;
    level: string;
    effect: string;
    state: string;
    next: string;
    description: string;
  }[];
}

/** The approval page's rows, by server in the directory's order. */
export function mcpServerViews(status: readonly McpToolStatus[]): McpServerView[] {
  const out: McpServerView[] = [];
  for (const t of status) {
    let s = out.find((x) => x.id === t.serverId);
    if (!s) out.push((s = { id: t.serverId, name: t.serverName, approvable: false, tools: [] }));
    if (t.state === 'pending' || t.state === 'changed') s.approvable = true;
    s.tools.push({
      tool: t.tool,
      modelName: t.modelName,
      level: `レベル${t.level}以上`,
      effect: t.effect === 'write' ? '書き込み（実行前に本人に確認）' : '読むだけ',
      state: MCP_STATE_WORDS[t.state],
      next: NEXT_STEP[t.state],
      description: t.description.slice(0, 600),
    });
  }
  return out;
}
