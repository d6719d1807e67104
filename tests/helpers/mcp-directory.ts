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
