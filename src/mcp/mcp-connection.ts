import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ListedTool } from './mcp-approvals';
import type { McpServerSpec } from './mcp-config';

/** Whether a server answers: `up` after a listing; `down` until a retry succeeds. */
export type ConnectionState = 'connecting' | 'up' | 'down';

/** What a call of an MCP tool gave: its text (all text parts joined) and whether the tool said it failed. */
export interface CallOutcome {
  text: string;
  isError: boolean;
}

/**
 * Why a call did not give an outcome: the server is down, it did not answer in time (it may have acted), or it
 * refused the request (a protocol error such as invalid parameters).
 */
export class McpCallFailure extends Error {
  constructor(readonly reason: 'down' | 'timeout' | 'rejected') {
    super(`MCP call failed: ${reason}`);
    this.name = 'McpCallFailure';
  }
}

interface ConnectionOptions {
  /** How long to wait before connecting again after a failure. */
  retryMs: number;
  /** Called after every change of state or listing. */
  onChange: () => void;
  /** Logs a failure by kind only (never a header, an argument or an output). */
  onError: (what: string, err: unknown) => void;
}

/**
 * One MCP server (issue 42), through the official SDK's client: stdio or streamable HTTP. Lists the tools at
 * connect and again on `notifications/tools/list_changed`; a failure to connect or a lost connection makes it
 * `down` and it tries again every `retryMs` (the service never waits for it).
 */
export class McpConnection {
  state: ConnectionState = 'connecting';
  /** The tools as last listed (kept while down: the operator page shows them). */
  tools: ListedTool[] = [];
  private client: Client | null = null;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;
  private attempt: Promise<void> | null = null;

  constructor(
    readonly spec: McpServerSpec,
    private readonly o: ConnectionOptions,
  ) {}

  /** Connects (the first attempt; later ones follow by themselves). Resolves when the attempt ends, either way. */
  start(): Promise<void> {
    this.attempt ??= this.connect();
    return this.attempt;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    await this.client?.close().catch(() => undefined);
    this.client = null;
  }

  /** Calls a tool with a time limit; its output's text is capped at `maxChars`. */
  async call(tool: string, args: Record<string, unknown>, timeoutMs: number, maxChars: number): Promise<CallOutcome> {
    const client = this.client;
    if (!client || this.state !== 'up') throw new McpCallFailure('down');
    try {
      const result = await client.callTool({ name: tool, arguments: args }, undefined, {
        signal: AbortSignal.timeout(timeoutMs),
        timeout: timeoutMs,
      });
      const parts = Array.isArray(result.content) ? (result.content as { type: string; text?: unknown }[]) : [];
      const text = parts
        .map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : `[${p.type}]`))
        .join('\n');
      return { text: text.length > maxChars ? `${text.slice(0, maxChars)}…` : text, isError: result.isError === true };
    } catch (err) {
      if (isTimeout(err)) throw new McpCallFailure('timeout');
      if (err instanceof McpError && err.code !== (ErrorCode.ConnectionClosed as number))
        throw new McpCallFailure('rejected');
      this.o.onError('call', err);
      this.lost(client);
      throw new McpCallFailure('down');
    }
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new Client(
      { name: 'hisho', version: '0.1.0' },
      {
        listChanged: {
          tools: {
            autoRefresh: true,
            onChanged: (err, tools) => {
              if (err || !tools || this.client !== client) return;
              this.tools = tools.map(listed);
              this.o.onChange();
            },
          },
        },
      },
    );
    try {
      const transport = this.transport();
      transport.onclose = () => this.lost(client);
      await client.connect(transport, { timeout: 10_000 });
      const tools: ListedTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: 10_000 });
        tools.push(...page.tools.map(listed));
        cursor = page.nextCursor;
      } while (cursor);
      if (this.closed) return void (await client.close().catch(() => undefined));
      this.client = client;
      this.tools = tools;
      this.state = 'up';
      this.o.onChange();
    } catch (err) {
      this.o.onError('connect', err);
      await client.close().catch(() => undefined);
      this.down();
    }
  }

  /** A connection that failed: down, and another attempt later. */
  private lost(client: Client): void {
    if (this.client !== client) return;
    this.client = null;
    void client.close().catch(() => undefined);
    this.down();
  }

  private down(): void {
    const changed = this.state !== 'down';
    this.state = 'down';
    if (changed) this.o.onChange();
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.attempt = this.connect();
    }, this.o.retryMs);
    this.retry.unref();
  }

  private transport(): Transport {
    const s = this.spec.transport;
    if (s.kind === 'stdio')
      return new StdioClientTransport({ command: s.command, args: s.args, env: s.env, stderr: 'ignore' });
    return new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: s.headers } });
  }
}

function listed(t: { name: string; description?: string; inputSchema: unknown }): ListedTool {
  return {
    name: t.name,
    description: t.description ?? '',
    inputSchema: (t.inputSchema ?? { type: 'object' }) as Record<string, unknown>,
  };
}

function isTimeout(err: unknown): boolean {
  if (err instanceof McpError && err.code === (ErrorCode.RequestTimeout as number)) return true;
  return err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
}
