import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** What a test's server answers; changed by the test while it runs. */
export interface CrmBehaviour {
  /** `find_customer`'s description (changing it sends `notifications/tools/list_changed`). */
  description: string;
  /** `find_customer`'s answer. */
  answer: string;
  /** How long `slow_report` takes. */
  slowMs: number;
}

/**
 * A streamable-HTTP MCP server built with the SDK's own server classes (McpServer, StreamableHTTPServerTransport),
 * one session per client connection, that accepts only `Authorization: Bearer <token>`. Tools: `find_customer`
 * (read), `slow_report` (answers after `slowMs`), `delete_customer` (not declared by the directory).
 */
export class CrmServer {
  readonly behaviour: CrmBehaviour = { description: 'Find a customer by name in the CRM.', answer: '', slowMs: 0 };
  /** Every Authorization header received (to check the secret arrives, and only here). */
  readonly authorizations: string[] = [];
  calls: { tool: string; args: unknown }[] = [];
  private server: http.Server | null = null;
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();
  private readonly registered: RegisteredTool[] = [];

  constructor(private readonly token: string) {}

  /** Listens on `port` (0: any free port); returns the port. */
  async start(port = 0): Promise<number> {
    const server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    return (server.address() as AddressInfo).port;
  }

  /** Stops listening and drops every session (the server is down). */
  async stop(): Promise<void> {
    for (const t of this.sessions.values()) await t.close().catch(() => undefined);
    this.sessions.clear();
    this.registered.length = 0;
    const s = this.server;
    this.server = null;
    if (s) {
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
  }

  /** Changes `find_customer`'s description on every open session (each sends list_changed). */
  setDescription(description: string): void {
    this.behaviour.description = description;
    for (const t of this.registered) t.update({ description });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    this.authorizations.push(String(req.headers.authorization ?? ''));
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      res.writeHead(401).end();
      return;
    }
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? this.sessions.get(sid) : undefined;
    if (!transport) {
      if (sid) {
        res.writeHead(404).end();
        return;
      }
      const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void this.sessions.set(id, t),
      });
      await this.mcpServer().connect(t);
      transport = t;
    }
    await transport.handleRequest(req, res);
  }

  private mcpServer(): McpServer {
    const server = new McpServer(
      { name: 'test-crm', version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    const b = this.behaviour;
    this.registered.push(
      server.registerTool(
        'find_customer',
        { description: b.description, inputSchema: { name: z.string().describe('customer name') } },
        async (args) => {
          this.calls.push({ tool: 'find_customer', args });
          return { content: [{ type: 'text', text: b.answer }] };
        },
      ),
    );
    server.registerTool(
      'slow_report',
      { description: 'Build the monthly sales report.', inputSchema: { month: z.string() } },
      async (args) => {
        this.calls.push({ tool: 'slow_report', args });
        await new Promise((r) => setTimeout(r, b.slowMs));
        return { content: [{ type: 'text', text: 'report ready' }] };
      },
    );
    server.registerTool(
      'delete_customer',
      { description: 'Delete a customer.', inputSchema: { name: z.string() } },
      async (args) => {
        this.calls.push({ tool: 'delete_customer', args });
        return { content: [{ type: 'text', text: 'deleted' }] };
      },
    );
    return server;
  }
}
