import type { InboundMessage, ReplyOption } from '../core/chat';
import { actorFromRows, type Actor } from '../authorization';
import type { BudgetVerdict, SenderBudget, UsageRow } from './sender-budget';
import { SqlParams, type Sql } from '../db/sql';
import {
  completeCte,
  enqueueValuesCte,
  type ClaimedItem,
  type EnqueueInput,
  type WorkOutcome,
} from '../queue/work-queue';
import { turnCtes, type PreparedTurn } from './turn-recorder';
import {
  markSentCte,
  priorColumns,
  priorPost,
  heldClaimCte,
  reserveCte,
  takenWithColumns,
  type Delivered,
  type WorkClaim,
  type PriorPost,
  type PriorRow,
} from '../queue/outbox';
import { botMessageCte, userMessageCte } from '../context/conversation-log';
import type { ConversationSummaries } from '../context/conversation-summaries';
import { pendingRowFromJson } from '../confirmations/pending-rows';
import type { SessionRows } from '../confirmations/session-store';

/** What one round trip at the start of a turn yields. */
export interface TurnPrelude {
  /** A reply with this key was already delivered (the turn is a retry after a crash). */
  alreadySent: boolean;
  /** What an earlier attempt left on the reply's outbox row (null on the first attempt). */
  prior: PriorPost | null;
  actor: Actor;
  profile: { title: string | null; preferences: Record<string, unknown>; departmentName: string | null } | null;
  /** The sender's session as stored, with its pending action and that question's delivery (for `getSession`). */
  session: SessionRows;
  /** Whether the sender is within their per-sender budgets (issue 8), read in the same statement. */
  budget: BudgetVerdict;
  /**
   * The statement reserved the reply's outbox row and took it for the turn's claim (the `take` option), which had
   * this many ms left as the database saw it; null when it did not (see `takenWithColumns` in the outbox).
   */
  takenLeftMs: number | null;
}

/** What the last statement of a turn writes. */
export interface TurnClose {
  msg: InboundMessage;
  /** The reply as posted (null when nothing was posted: shadow mode or a silent refusal). */
  sent: { platformMessageId?: string } | null;
  /** The bot's message for the history; null when nothing was said (a silent refusal). */
  history: { text: string; options?: ReplyOption[]; at: Date } | null;
  turn: PreparedTurn;
  item: ClaimedItem;
  /** The reply this turn posted, marked sent here (null when it posted nothing or an earlier attempt did). */
  posted: Delivered | null;
  /** The model answered: check whether the conversation's summary is due (R-X4). */
  summarize: boolean;
  /** Work items about this turn, stored with it (its self-critique when sampled). */
  enqueue?: readonly (EnqueueInput & { maxAttempts: number })[];
}

/** What the last statement of a turn did. */
export interface TurnClosed extends WorkOutcome {
  /** A conversation-summary item was enqueued (a worker should be woken). */
  summaryEnqueued: boolean;
  /** How many of `enqueue` were stored (0 for a retry that had stored them already). */
  enqueued: number;
}

interface PreludeRow extends PriorRow {
  reserved: number;
  a_org: string | null;
  m_id: string | null;
  m_org: string | null;
  m_name: string | null;
  m_level: number | null;
  m_dept: string | null;
  m_active: boolean | null;
  m_title: string | null;
  m_prefs: Record<string, unknown> | null;
  d_name: string | null;
  r_org: string | null;
  r_authority: string | null;
  s_exists: boolean;
  s_mode: string | null;
  s_pending: string | null;
  s_expires: Date | null;
  s_rounds: number | null;
  s_errors: number | null;
  s_intent: string | null;
  s_tool: string | null;
  s_error: string | null;
  /** The session's pending action (row_to_json), and the delivery of its current question. */
  p_row: Record<string, unknown> | null;
  q_status: string | null;
  q_sent: Date | null;
  budget_usage: UsageRow | null;
  /** The ms the turn's claim had left when the statement took the reply's row with it (null: not taken). */
  taken_left_ms: number | null;
}

/**
 * The turn's first and last statements, composed from fragments their tables' owners export (the
 * outbox, the conversation log, the turn recorder, the work queue): one round trip each on the hot path. The last
 * is one statement so that the turn's writes and the item's completion commit together; the first, for speed
 * (decision 0013).
 */
export class TurnStore {
  constructor(
    private readonly sql: Sql,
    private readonly parts: {
      /** Per-sender budgets: the sender's use is read in the first statement. */
      budget?: SenderBudget;
      /** Conversation summaries: whether one is due is checked in the last statement. */
      summaries?: ConversationSummaries;
    } = {},
  ) {}

  /**
   * One statement: reserve the reply key, store the user message (idempotent), and read the sender,
   * the room, the session row and the sender's use of their budgets. With `take` (the turn's claim) the reply's row
   * is taken for that claim as it is reserved, and then the commit waits for the flush: the post relies on it as on
   * the outbox's take (`takenLeftMs`).
   */
  async open(
    msg: InboundMessage,
    replyKey: string,
    opts: { defaultLevel: number; now: Date; take?: WorkClaim },
  ): Promise<TurnPrelude> {
    const p = new SqlParams();
    // The reply's row is taken for the turn's claim as it is reserved, so the post needs no take of its own.
    const held = opts.take ? heldClaimCte(p, 'k', opts.take) : null;
    const reserve = reserveCte(
      p,
      'r',
      { dedupeKey: replyKey, platform: msg.platform, roomId: msg.roomId, body: '' },
      held ? 'k' : undefined,
    );
    const stored = userMessageCte(p, 'm', {
      orgId: msg.orgId,
      platform: msg.platform,
      roomId: msg.roomId,
      accountId: msg.senderAccountId,
      text: msg.text,
      platformMessageId: msg.platformMessageId,
      sentAt: new Date(msg.sentAt),
    });
    const [key, platform, room, account] = [
      p.add(replyKey),
      p.add(msg.platform),
      p.add(msg.roomId),
      p.add(msg.senderAccountId),
    ];
    const usage = this.parts.budget?.usageColumn(p, msg) ?? 'NULL::json';
    const rows = await this.sql<PreludeRow>(
      `WITH ${held ? `${held}, ` : ''}${reserve}, ${stored}
       SELECT (SELECT count(*) FROM r)::int AS reserved, ${priorColumns('o')},
              a."orgId" AS a_org, mb.id AS m_id, mb."orgId" AS m_org, mb.name AS m_name, mb.level AS m_level,
              mb."departmentId" AS m_dept, mb.active AS m_active, mb.title AS m_title, mb.preferences AS m_prefs,
              d.name AS d_name, rm."orgId" AS r_org, rm.authority AS r_authority,
              (s.platform IS NOT NULL) AS s_exists, s.mode AS s_mode, s."pendingActionId" AS s_pending,
              s."expiresAt" AS s_expires, s."clarificationRounds" AS s_rounds, s."errorCount" AS s_errors,
              s."lastIntent" AS s_intent, s."lastTool" AS s_tool, s."lastError" AS s_error,
              row_to_json(pa) AS p_row, q.status AS q_status, q."sentAt" AS q_sent,
              ${usage} AS budget_usage,
              ${held ? takenWithColumns('r', 'k') : 'NULL::float8 AS taken_left_ms'}
       FROM (SELECT 1) one
       LEFT JOIN outbound_messages o ON o."dedupeKey" = ${key}
       LEFT JOIN platform_accounts a ON a.platform = ${platform} AND a."accountId" = ${account}
       LEFT JOIN members mb ON mb."orgId" = a."orgId" AND mb.id = a."memberId"
       LEFT JOIN departments d ON d."orgId" = mb."orgId" AND d.id = mb."departmentId"
       LEFT JOIN rooms rm ON rm.platform = ${platform} AND rm."externalId" = ${room}
       LEFT JOIN conversation_states s
         ON s.platform = ${platform} AND s."roomId" = ${room} AND s."accountId" = ${account}
       LEFT JOIN pending_actions pa ON pa.id = s."pendingActionId"
       LEFT JOIN outbound_messages q ON q."dedupeKey" = pa."questionKey"`,
      p.values,
    );
    const row = rows[0]!;
    const budget = this.parts.budget?.verdict(row.budget_usage) ?? { ok: true };
    const takenLeftMs = held ? row.taken_left_ms : null;
    return { ...prelude(row, msg, opts), budget, takenLeftMs };
  }

  /**
   * One statement at the end of a turn: mark the reply sent, append the bot message to the conversation,
   * write the turn record and its LLM usage, enqueue the conversation's summary when due and the turn's own
   * work items (its self-critique), and complete the work item (only if this worker still holds it).
   */
  async close(c: TurnClose): Promise<TurnClosed> {
    const p = new SqlParams();
    const { msg, history } = c;
    const ctes: string[] = [];
    if (c.posted) ctes.push(markSentCte(p, 'o', c.posted));
    if (history) {
      ctes.push(
        botMessageCte(p, 'h', {
          orgId: msg.orgId,
          platform: msg.platform,
          roomId: msg.roomId,
          accountId: msg.senderAccountId,
          text: history.text,
          options: history.options,
          platformMessageId: c.sent?.platformMessageId ?? null,
          sentAt: history.at,
        }),
      );
    }
    ctes.push(...turnCtes(p, c.turn), completeCte(p, 'w', c.item));
    const summaries = c.summarize && this.parts.summaries?.enabled ? this.parts.summaries : null;
    const conversation = {
      orgId: msg.orgId,
      platform: msg.platform,
      roomId: msg.roomId,
      accountId: msg.senderAccountId,
    };
    if (summaries) ctes.push(summaries.dueCtes(p, 'sq', conversation));
    const due = summaries ? '(SELECT count(*) FROM sq)::int' : '0';
    const more = c.enqueue && c.enqueue.length > 0 ? c.enqueue : null;
    if (more) ctes.push(enqueueValuesCte(p, 'eq', more));
    const enqueued = more ? '(SELECT count(*) FROM eq)::int' : '0';
    const rows = await this.sql<{ completed: number; summary: number; enqueued: number }>(
      `WITH ${ctes.join(',\n')}
       SELECT (SELECT count(*) FROM w)::int AS completed, ${due} AS summary, ${enqueued} AS enqueued`,
      p.values,
    );
    const r = rows[0];
    return { completed: r?.completed === 1, summaryEnqueued: (r?.summary ?? 0) > 0, enqueued: r?.enqueued ?? 0 };
  }
}

/** The session's row, its pending action and the delivery of that action's current question, as read. */
function sessionRows(r: PreludeRow): SessionRows {
  const state = r.s_exists
    ? {
        mode: r.s_mode!,
        pendingActionId: r.s_pending,
        expiresAt: new Date(r.s_expires!),
        clarificationRounds: r.s_rounds ?? 0,
        errorCount: r.s_errors ?? 0,
        lastIntent: r.s_intent,
        lastTool: r.s_tool,
        lastError: r.s_error,
      }
    : null;
  const pending = r.p_row ? pendingRowFromJson(r.p_row) : null;
  return { state, pending, questionShownAt: r.q_status === 'sent' && r.q_sent ? new Date(r.q_sent) : null };
}

/** The prelude's row as the turn's view of sender, room and session. */
function prelude(
  r: PreludeRow,
  msg: InboundMessage,
  opts: { defaultLevel: number },
): Omit<TurnPrelude, 'budget' | 'takenLeftMs'> {
  const account =
    r.a_org && r.m_id
      ? {
          orgId: r.a_org,
          member: {
            id: r.m_id,
            orgId: r.m_org!,
            name: r.m_name!,
            level: r.m_level!,
            departmentId: r.m_dept,
            active: r.m_active === true,
          },
        }
      : null;
  const room = r.r_org ? { orgId: r.r_org, authority: r.r_authority ?? 'public' } : null;
  const actor = actorFromRows(
    { account, room },
    { orgId: msg.orgId, defaultLevel: opts.defaultLevel, fallbackAuthority: msg.roomAuthority },
  );
  return {
    alreadySent: r.reserved === 0 && r.prior_status === 'sent',
    prior: r.reserved === 0 ? priorPost(r) : null,
    actor,
    profile: actor.memberId ? { title: r.m_title, preferences: r.m_prefs ?? {}, departmentName: r.d_name } : null,
    session: sessionRows(r),
  };
}
