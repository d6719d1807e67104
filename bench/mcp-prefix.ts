// `npx tsx bench/mcp-prefix.ts`: what declared MCP tools (issue 42) cost a request — the cached prefix (loaded tools +
// system block) and the whole first request of a level-6 member's turn, with 0 and with 50 declared, approved MCP
// tools (5 servers × 10 tools, descriptions and schemas the size of real servers'), built by the service's own
// McpTools (servers unreachable: approved tools stay offered, as after a restart) and request builder. Tokens: the
// Claude tokenizer of `@anthropic-ai/tokenizer`, an approximation (bench/prompt-size.ts).
import { countTokens } from '@anthropic-ai/tokenizer';
import type { Approval } from '../src/mcp/mcp-approvals';
import { McpTools } from '../src/mcp/mcp-tools';
import { prefixOf, requestSizes, turnRequest } from './prompt-size';

const SERVERS = ['drive', 'calendar', 'kintone', 'backlog', 'chatwork'];
const VERBS = ['list', 'get', 'search', 'create', 'update', 'delete', 'move', 'share', 'comment', 'export'];

/** 50 approved tools: a 3-parameter schema and a two-sentence description each (≈ 60 words with the schema). */
function approvals(): Approval[] {
  return SERVERS.flatMap((server) =>
    VERBS.map((verb) => ({
      serverId: server,
      name: `${verb}_items`,
      description:
        `${verb[0]!.toUpperCase()}${verb.slice(1)} items in the ${server} workspace the account can see. ` +
        'Returns the matching items with their ids, titles, owners and last update times, newest first.',
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string', description: 'Words to look for in titles and bodies.' },
          folder_id: { type: 'string', description: 'Only items under this folder or project.' },
          limit: { type: 'integer', description: 'How many items at most (1-100).', minimum: 1, maximum: 100 },
        },
        required: ['query'],
      },
      hash: 'x',
      approvedBy: 'bench',
      approvedAt: new Date(0),
    })),
  );
}

async function main(): Promise<void> {
  const pinned = approvals();
  const tools = new McpTools({
    approvals: { list: async () => pinned, approve: async () => undefined },
    orgId: 'acme',
    servers: SERVERS.map((id) => ({
      id,
      name: id,
      transport: { kind: 'stdio' as const, command: '/nonexistent/mcp-server', args: [], env: {} },
      timeoutMs: 30_000,
      tools: Object.fromEntries(VERBS.map((v) => [`${v}_items`, { level: 1, effect: 'read' as const }])),
    })),
    retryMs: 3_600_000,
  });
  await tools.start(2000);
  const offered = tools.definitions().length;
  console.log(`declared and approved MCP tools offered: ${offered}`);
  console.log('MCP tools   prefix tokens (tools + system)   prefix bytes   first request bytes   loaded / deferred');
  const prefixes: string[] = [];
  for (const [label, sources] of [
    ['0', []],
    [String(offered), [tools.definitions]],
  ] as const) {
    const req = turnRequest({ level: 6, toolSources: sources });
    const s = requestSizes(req);
    const p = prefixOf(req);
    prefixes.push(p.tools + p.system);
    console.log(
      `${label.padEnd(11)} ${String(s.prefix.tokens).padStart(6)} (${s.tools.tokens} + ${s.system.tokens})`.padEnd(45) +
        `${String(s.prefix.bytes).padStart(9)}   ${String(s.body.bytes).padStart(19)}   ` +
        `${s.loaded.length} / ${s.deferred.length}`,
    );
  }
  console.log(
    prefixes[0] === prefixes[1] ? 'the prefix is byte-identical with and without them' : 'the prefix differs',
  );
  const req = turnRequest({ level: 6, toolSources: [tools.definitions] });
  const mcpDefs = req.tools.filter((t) => t.name.includes('__'));
  const each = mcpDefs.map((t) => countTokens(JSON.stringify(t)));
  const mean = each.reduce((a, b) => a + b, 0) / each.length;
  console.log(
    `one MCP tool's definition once a search loads it: ≈ ${Math.round(mean)} tokens (mean of ${each.length})`,
  );
  await tools.close();
}

void main();
