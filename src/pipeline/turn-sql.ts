import type { InboundMessage, ReplyOption } from '../adapters/types';
import { actorFromRows, type Actor } from '../authorization';
import type { Sql } from '../db/sql';
import type { ClaimedItem } from '../intake/work-queue';
import type { PreparedTurn } from '../observability/turn-recorder';
import type { SessionKey } from '../state/session-key';
import type { SessionView } from '../state/types';
import type { PriorPost } from './outbox';

/** What one round trip at the start of a turn yields. */
export interface TurnPrelude {
  /** A reply with this key was already delivered (the turn is a retry after a crash). */
  alreadySent: boolean;
  /** What an earlier attempt left on the reply's outbox row (null on the first attempt). */
  prior: PriorPost | null;
  actor: Actor;
  profile: { title: string | null; preferences: Record<string, unknown>; departmentName: string | null } | null;
  /** The session when it is plainly NORMAL; null when the BrainStateManager must look (pending/expired). */
  quickSession: SessionView | null;
}

interface PreludeRow {
  reserved: number; prior_status: string | null; prior_owner: string | null; prior_created: Date | null;
  a_org: string | null; m_id: string | null; m_org: string | null; m_name: string | null; m_level: number | null; m_dept: string | null; m_active: boolean | null;
  m_title: string | null; m_prefs: Record<string, unknown> | null; d_name: string | null;
  r_org: string | null; r_authority: string | null;
  s_exists: boolean; s_mode: string | null; s_pending: string | null; s_expires: Date | null; s_rounds: number | null; s_errors: number | null;
  s_intent: string | null; s_tool: string | null; s_error: string | null;
}

/**
 * One statement: reserve the reply key, store the user message (idempotent), and read the sender,
 * the room and the session row. Replaces six ORM round trips on every turn.
 */
export async function turnPrelude(sql: Sql, msg: InboundMessage, replyKey: string, opts: { defaultLevel: number; now: Date }): Promise<TurnPrelude> {
  const rows = await sql<PreludeRow>(
    `WITH r AS (
       INSERT INTO outbound_messages (id, "dedupeKey", platform, "roomId", body, status)
       VALUES (gen_random_uuid(), $1, $2, $3, '', 'sending') ON CONFLICT ("dedupeKey") DO NOTHING RETURNING 1),
     m AS (
       INSERT INTO conversation_messages ("orgId", platform, "roomId", "accountId", role, text, "platformMessageId", "sentAt")
       VALUES ($4, $2, $3, $5, 'user', $6, $7, $8) ON CONFLICT DO NOTHING RETURNING 1)
     SELECT (SELECT count(*) FROM r)::int AS reserved,
            o.status AS prior_status, o."claimedBy" AS prior_owner, o."createdAt" AS prior_created,
            a."orgId" AS a_org, mb.id AS m_id, mb."orgId" AS m_org, mb.name AS m_name, mb.level AS m_level, mb."departmentId" AS m_dept,
            mb.active AS m_active, mb.title AS m_title, mb.preferences AS m_prefs, d.name AS d_name,
            rm."orgId" AS r_org, rm.authority AS r_authority,
            (s.platform IS NOT NULL) AS s_exists, s.mode AS s_mode, s."pendingActionId" AS s_pending, s."expiresAt" AS s_expires,
            s."clarificationRounds" AS s_rounds, s."errorCount" AS s_errors, s."lastIntent" AS s_intent, s."lastTool" AS s_tool, s."lastError" AS s_error
     FROM (SELECT 1) one
     LEFT JOIN outbound_messages o ON o."dedupeKey" = $1
     LEFT JOIN platform_accounts a ON a.platform = $2 AND a."accountId" = $5
     LEFT JOIN members mb ON mb."orgId" = a."orgId" AND mb.id = a."memberId"
     LEFT JOIN departments d ON d."orgId" = mb."orgId" AND d.id = mb."departmentId"
     LEFT JOIN rooms rm ON rm.platform = $2 AND rm."externalId" = $3
     LEFT JOIN conversation_states s ON s.platform = $2 AND s."roomId" = $3 AND s."accountId" = $5`,
    [replyKey, msg.platform, msg.roomId, msg.orgId, msg.senderAccountId, msg.text, msg.platformMessageId, new Date(msg.sentAt)],
  );
  const r = rows[0]!;
  const account = r.a_org && r.m_id
    ? { orgId: r.a_org, member: { id: r.m_id, orgId: r.m_org!, name: r.m_name!, level: r.m_level!, departmentId: r.m_dept, active: r.m_active === true } }
    : null;
  const room = r.r_org ? { orgId: r.r_org, authority: r.r_authority ?? 'public' } : null;
  const actor = actorFromRows({ account, room }, { orgId: msg.orgId, defaultLevel: opts.defaultLevel, fallbackAuthority: msg.roomAuthority });
  const key: SessionKey = { platform: msg.platform, roomId: msg.roomId, accountId: msg.senderAccountId };
  const expired = r.s_exists && r.s_expires !== null && new Date(r.s_expires).getTime() < opts.now.getTime();
  const plain = !r.s_exists || (!expired && r.s_pending === null && r.s_mode !== 'CONFIRMATION_PENDING');
  const quickSession: SessionView | null = plain
    ? {
        key, mode: (r.s_mode as SessionView['mode'] | null) ?? 'NORMAL', pending: null, expiredPending: null,
        clarificationRounds: r.s_rounds ?? 0, errorCount: r.s_errors ?? 0, lastIntent: r.s_intent, lastTool: r.s_tool, lastError: r.s_error,
        expiresAt: r.s_expires ? new Date(r.s_expires) : null,
      }
    : null;
  return {
    alreadySent: r.reserved === 0 && r.prior_status === 'sent',
    prior: r.reserved === 0 && r.prior_status !== null
      ? {
        status: r.prior_status, claimedBy: r.prior_owner, createdAt: new Date(r.prior_created!),
        platformMessageId: null,
      }
      : null,
    actor,
    profile: actor.memberId ? { title: r.m_title, preferences: r.m_prefs ?? {}, departmentName: r.d_name } : null,
    quickSession,
  };
}

const TURN_JSON = new Set(['contextSummary', 'reasoning', 'confidence', 'proposals', 'execution', 'selfCritique']);

/**
 * One statement at the end of a turn (the reply is already marked sent): append the bot message to the history, write
 * the turn record and its LLM usage, and complete the work item (only if this worker still holds it).
 */
export async function turnFinish(sql: Sql, input: {
  msg: InboundMessage; sent: { text: string; platformMessageId?: string } | null;
  /** The bot's message for the history; null when nothing was said (a silent refusal). */
  history: { text: string; options?: ReplyOption[]; at: Date } | null; turn: PreparedTurn; item: ClaimedItem;
}): Promise<{ completed: boolean }> {
  const p: unknown[] = [];
  const v = (x: unknown) => { p.push(x); return `$${p.length}`; };
  const { msg, turn } = input;
  const parts: string[] = [];
  const h = input.history;
  if (h) {
    parts.push(`h AS (INSERT INTO conversation_messages ("orgId", platform, "roomId", "accountId", role, text, "platformMessageId", options, "sentAt")
    VALUES (${v(msg.orgId)}, ${v(msg.platform)}, ${v(msg.roomId)}, ${v(msg.senderAccountId)}, 'assistant', ${v(h.text)}, ${v(input.sent?.platformMessageId ?? null)},
            ${v(h.options ? JSON.stringify(h.options) : null)}::jsonb, ${v(h.at)}) RETURNING 1)`);
  }
  const cols = Object.keys(turn.row);
  parts.push(`t AS (INSERT INTO turn_records (${cols.map((c) => `"${c}"`).join(', ')})
    VALUES (${cols.map((c) => `${v(turn.row[c])}${TURN_JSON.has(c) ? '::jsonb' : c === 'workItemId' ? '::bigint' : c === 'costUsd' ? '::numeric' : ''}`).join(', ')}) RETURNING 1)`);
  if (turn.usage.length > 0) {
    parts.push(`u AS (INSERT INTO llm_usage ("turnId", "orgId", model, purpose, "inputTokens", "outputTokens", "cacheWriteTokens", "cacheReadTokens", "costUsd", "durationMs", "requestId")
      SELECT "turnId", "orgId", model, purpose, "inputTokens", "outputTokens", "cacheWriteTokens", "cacheReadTokens", "costUsd", "durationMs", "requestId"
      FROM jsonb_to_recordset(${v(JSON.stringify(turn.usage))}::jsonb) AS x("turnId" text, "orgId" text, model text, purpose text, "inputTokens" int, "outputTokens" int,
        "cacheWriteTokens" int, "cacheReadTokens" int, "costUsd" numeric, "durationMs" int, "requestId" text) RETURNING 1)`);
  }
  parts.push(`w AS (UPDATE work_items SET state = 'done', "finishedAt" = now(), "updatedAt" = now(), "claimExpiresAt" = NULL
    WHERE id = ${v(input.item.id.toString())}::bigint AND "claimedBy" = ${v(input.item.claimToken)} AND state = 'running' RETURNING 1)`);
  const rows = await sql<{ completed: number }>(`WITH ${parts.join(',\n')} SELECT (SELECT count(*) FROM w)::int AS completed`, p);
  return { completed: rows[0]?.completed === 1 };
}
