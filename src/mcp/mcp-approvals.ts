import { createHash } from 'node:crypto';
import type { Db } from '../db/prisma';
import { canonicalJson } from '../tools/executor';

/** A tool as its MCP server lists it (what is pinned when an operator approves it). */
export interface ListedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** An approved tool: what the operator saw and its hash. */
export interface Approval extends ListedTool {
  serverId: string;
  hash: string;
  approvedBy: string;
  approvedAt: Date;
}

/**
 * The pin of a tool (issue 42, the "rug pull"): sha256 of its name, description and input schema (keys sorted).
 * Annotations such as `readOnlyHint` are not part of it: they are hints, never permissions.
 */
export function toolHash(t: ListedTool): string {
  return createHash('sha256')
    .update(canonicalJson([t.name, t.description, t.inputSchema]))
    .digest('hex');
}

/** The `mcp_tool_approvals` table: its one writer. */
export class McpApprovals {
  constructor(private readonly db: Pick<Db, 'mcpToolApproval' | '$transaction'>) {}

  async list(orgId: string): Promise<Approval[]> {
    const rows = await this.db.mcpToolApproval.findMany({ where: { orgId } });
    return rows.map((r) => ({
      serverId: r.serverId,
      name: r.toolName,
      description: r.description,
      inputSchema: (r.inputSchema ?? {}) as Record<string, unknown>,
      hash: r.hash,
      approvedBy: r.approvedBy,
      approvedAt: r.approvedAt,
    }));
  }

  /** Pins these tools of a server as they are listed now (an earlier approval of a tool is replaced). */
  async approve(orgId: string, serverId: string, tools: readonly ListedTool[], approvedBy: string): Promise<void> {
    await this.db.$transaction(
      tools.map((t) => {
        const row = {
          hash: toolHash(t),
          description: t.description,
          inputSchema: t.inputSchema as object,
          approvedBy,
          approvedAt: new Date(),
        };
        return this.db.mcpToolApproval.upsert({
          where: { orgId_serverId_toolName: { orgId, serverId, toolName: t.name } },
          create: { orgId, serverId, toolName: t.name, ...row },
          update: row,
        });
      }),
    );
  }
}
