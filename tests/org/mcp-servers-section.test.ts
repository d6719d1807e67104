import fs from 'node:fs';
import path from 'node:path';
import { DirectoryImportError } from '../../src/org/import-directory';
import { parseDirectory } from '../../src/org/parse-directory';
import { directoryFailure } from '../../src/app/startup-checks';

const sample = fs.readFileSync(path.resolve(__dirname, '..', '..', 'config', 'org.sample.yaml'), 'utf8');

/** The sample directory with an `mcp_servers` section appended (its first line's number returned too). */
function withServers(section: string): { text: string; line: number } {
  const text = `${sample.trimEnd()}\n${section}`;
  return { text, line: sample.trimEnd().split('\n').length + 1 };
}

const FILES = `mcp_servers:
  - id: files
    name: 共有ドライブ
    command: npx
    args: [-y, "@modelcontextprotocol/server-filesystem", /srv/shared]
    tools:
      read_text_file: { level: 1, effect: read }
      write_file:     { level: 3, effect: write }
`;

describe('the mcp_servers section of the organisation directory (issue 42)', () => {
  it('accepts the stdio and HTTP forms', () => {
    const http = `  - id: kintone
    url: https://example.cybozu.com/mcp
    headers: { Authorization: "Bearer \${KINTONE_TOKEN}" }
    tools:
      get-records: { level: 2, effect: read, examples: [案件の一覧を見せて] }
`;
    const r = parseDirectory(withServers(FILES + http).text, 'org.yaml', { KINTONE_TOKEN: 'secret' });
    if (!r.ok) throw new Error(r.errors.join('\n'));
    expect(r.directory.mcp_servers.map((s) => [s.id, Object.keys(s.tools)])).toEqual([
      ['files', ['read_text_file', 'write_file']],
      ['kintone', ['get-records']],
    ]);
    expect(r.directory.mcp_servers[0]!.tools.write_file).toEqual({ level: 3, effect: 'write' });
  });

  it('names the line of a bad level and a missing effect', () => {
    const { text, line } = withServers(`mcp_servers:
  - id: files
    command: npx
    tools:
      read_text_file: { level: 9 }
`);
    const r = parseDirectory(text, 'org.yaml');
    expect(r.ok).toBe(false);
    const errors = r.ok ? [] : r.errors;
    expect(errors).toContain(`mcp_servers[0].tools.read_text_file.level: must be between 1 and 6 (line ${line + 4})`);
    expect(errors).toContain(
      `mcp_servers[0].tools.read_text_file.effect: must be one of: read, write (line ${line + 4})`,
    );
  });

  it('refuses a server with both command and url, and a duplicate id', () => {
    const both = parseDirectory(
      withServers(`mcp_servers:
  - id: files
    command: npx
    url: https://example.com/mcp
    tools: { a: { level: 1, effect: read } }
`).text,
      'org.yaml',
    );
    expect(both.ok ? [] : both.errors.join('\n')).toMatch(/needs either "command".*not both/);
    const dup = parseDirectory(withServers(FILES + FILES.replace('mcp_servers:\n', '')).text, 'org.yaml');
    expect(dup.ok ? [] : dup.errors.join('\n')).toMatch(/duplicate MCP server id "files"/);
  });

  it('stops start-up with one Japanese sentence naming the file, the line and an unset variable', () => {
    const { text, line } = withServers(`mcp_servers:
  - id: kintone
    url: https://example.cybozu.com/mcp
    headers: { Authorization: "Bearer \${KINTONE_TOKEN}" }
    tools: { get_records: { level: 2, effect: read } }
`);
    const r = parseDirectory(text, 'org.yaml', {});
    if (r.ok) throw new Error('expected an error');
    expect(r.errors).toEqual([
      `mcp_servers[0].headers.Authorization: the environment variable KINTONE_TOKEN is not set (line ${line + 3})`,
    ]);
    const said = directoryFailure(new DirectoryImportError(r.errors, 'org.yaml'), 'ja').message;
    expect(said).toContain(`org.yaml の${line + 3}行目`);
    expect(said).toContain('環境変数 KINTONE_TOKEN が設定されていません');
    expect(said).not.toContain('secret');
  });
});
