import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/** The official filesystem MCP server, run from node_modules (no network). */
export const FILESYSTEM_SERVER = path.join(ROOT, 'node_modules', '.bin', 'mcp-server-filesystem');

/** A directory file: the sample organisation with this `mcp_servers` section appended (in a temporary folder). */
export function directoryWithServers(section: string): string {
  const sample = fs.readFileSync(path.join(ROOT, 'config', 'org.sample.yaml'), 'utf8');
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-mcp-org-')), 'org.yaml');
  fs.writeFileSync(file, `${sample.trimEnd()}\n${section}`);
  return file;
}

export const ADMIN_TOKEN = 'admin-token-for-mcp-tests-0123456789';

/** One server as the /admin approval page's API returns it. */
export interface McpServerRow {
  id: string;
  name: string;
  approvable: boolean;
  tools: { tool: string; modelName: string; level: string; effect: string; state: string; description: string }[];
}

/** The approval page's API, as the operator's browser calls it (bearer token; a POST carries its Origin). */
export function adminMcp(url: string) {
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, origin: url };
  return {
    async servers(): Promise<McpServerRow[]> {
      const res = await fetch(`${url}/admin/api/mcp`, { headers });
      return ((await res.json()) as { servers: McpServerRow[] }).servers;
    },
    /** `{ status, servers | error }` of pressing 「承認する」 for a server. */
    async approve(server: string): Promise<{ status: number; servers?: McpServerRow[]; error?: string }> {
      const res = await fetch(`${url}/admin/api/mcp/${server}/approve`, { method: 'POST', headers });
      return { status: res.status, ...((await res.json()) as object) };
    },
  };
}
