/**
 * A recorded proposal in words for the turn inspector (「田中花子さんにタスクを作成します。・期限: 11/28（土）」):
 * the tool's own `describe`, the same text a confirmation question shows, run read-only against the
 * directory in the database. A proposal that cannot be described (bad input, a tool since removed) says so.
 */
import { handlers } from '../../../handlers';
import type { Db } from '../../db/prisma';
import { genericEffect, renderEffect } from '../../tools/describe';
import { ToolExecutor } from '../../tools/executor';
import { ToolRegistry } from '../../tools/registry';

let executor: ToolExecutor | undefined;

export interface ProposalTurn {
  orgId: string | null;
  platform: string;
  roomId: string;
  memberId: string | null;
}

export async function proposalInWords(
  db: Db,
  turn: ProposalTurn,
  tool: string,
  params: unknown,
  timezone: string,
  now: Date,
  serverName?: (serverId: string) => string | undefined,
): Promise<string> {
  executor ??= new ToolExecutor(new ToolRegistry(handlers));
  // A company tool (MCP, `<server>__<tool>`): its server in the operator's words, then its parameters.
  const mcp = /^([a-z][a-z0-9_]*?)__(.+)$/.exec(tool);
  if (mcp && !handlers.some((h) => h.name === tool)) {
    const server = serverName?.(mcp[1]!) ?? mcp[1]!;
    const facts = params && typeof params === 'object' ? (params as Record<string, unknown>) : {};
    return renderEffect({
      ...genericEffect(mcp[2]!, facts, 'ja'),
      summary: `外部ツール「${server}」の「${mcp[2]}」を実行します。`,
    });
  }
  const m =
    turn.memberId && turn.orgId ? await db.member.findFirst({ where: { orgId: turn.orgId, id: turn.memberId } }) : null;
  const described = await executor.describe(tool, params, {
    orgId: turn.orgId ?? '',
    platform: turn.platform,
    roomId: turn.roomId,
    member: m ? { id: m.id, name: m.name, level: m.level, departmentId: m.departmentId } : null,
    now: () => now,
    timezone,
    services: { db },
    lang: 'ja',
  });
  if (described.status === 'ok') return renderEffect(described.effect);
  return described.status === 'clarify'
    ? 'この操作は内容があいまいだったため、ボットが質問しました。'
    : 'この操作は内容に不備があり、そのままでは実行できないものでした。';
}
