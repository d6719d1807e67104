import type { Db } from '../db/prisma';
import { pgText, SqlParams, sqlRunner, type Sql } from '../db/sql';
import { completeCte, enqueueSelectCte, type ClaimedItem } from '../queue/work-queue';
import type { ConversationRef } from './conversation-log';

/** Messages of a conversation the turn's context shows as they are (the recent window, context/). */
export const RECENT_MESSAGES = 10;

/** The `work` item payload of a conversation summary. */
export interface SummaryPayload extends ConversationRef {
  kind: 'conversation_summary';
}

export interface SummarySettings {
  /** A summary is (re)written each time this many messages beyond the recent window are not yet in it. */
  every: number;
  maxAttempts: number;
}

/** One message as the summariser reads it. */
export interface SummarySourceMessage {
  id: bigint;
  role: 'user' | 'assistant';
  text: string;
  sentAt: Date;
}

/** What is stored for a conversation and what came after it. */
export interface SummaryState {
  summary: string | null;
  /** The last message id the stored summary covers (0 without a summary). */
  coversUpToId: bigint;
  /** Messages after `coversUpToId`, oldest first. */
  since: SummarySourceMessage[];
}

const CONV = `platform = $1 AND "roomId" = $2 AND "accountId" = $3`;

/** The ordering and dedupe keys of a conversation's summary items (never the conversation's own key). */
function summaryKey(c: ConversationRef): string {
  return `summary:${c.platform}:${c.roomId}:${c.accountId}`;
}

/**
 * The single writer of `conversation_summaries` (R-X4). A summary covers every message of its conversation up
 * to `coversUpToId`; the context shows it (as quoted data) with the recent messages. Summaries are written
 * by a background `work` item (enqueued by a turn's last statement when {@link dueCtes} finds one due; the
 * summary runner in work/ writes it), never on the reply path, and only in redacted form.
 */
export class ConversationSummaries {
  private readonly sql: Sql;

  constructor(
    db: Db,
    private readonly settings: SummarySettings,
    sql?: Sql,
  ) {
    this.sql = sql ?? sqlRunner(db);
  }

  get enabled(): boolean {
    return this.settings.every > 0;
  }

  /**
   * CTEs ending in `name` (RETURNING 1 when a summary item was enqueued): the conversation's summary is due
   * when `every` messages beyond the recent window are not in it. The dedupe key names the stored summary it
   * refreshes and the batch of `every` messages, so a burst of messages enqueues one item, and a failed item
   * is retried by the queue's rules (a new one comes only with the next batch). Part of a turn's last
   * statement, so the check costs no round trip of its own.
   */
  dueCtes(p: SqlParams, name: string, c: ConversationRef): string {
    const payload: SummaryPayload = { kind: 'conversation_summary', ...pick(c) };
    const [platform, room, account] = [p.add(c.platform), p.add(c.roomId), p.add(c.accountId)];
    const [key, recent, every] = [p.add(summaryKey(c)), p.add(RECENT_MESSAGES), p.add(this.settings.every)];
    const select = `SELECT 'work', ${p.add(JSON.stringify(payload))}::jsonb, ${key}::text,
        ${key}::text || ':' || ${name}_s.covers::text || ':' || ((${name}_n.n - ${recent}::int) / ${every}::int)::text,
        ${p.add(this.settings.maxAttempts)}::int
      FROM ${name}_s, ${name}_n WHERE ${name}_n.n - ${recent}::int >= ${every}::int`;
    const conv = `platform = ${platform}::text AND "roomId" = ${room}::text AND "accountId" = ${account}::text`;
    const covers = `(SELECT "coversUpToId" FROM conversation_summaries WHERE ${conv})`;
    return `${name}_s AS (SELECT coalesce(${covers}, 0) AS covers),
      ${name}_n AS (SELECT count(*)::int AS n FROM conversation_messages m, ${name}_s
        WHERE m.platform = ${platform}::text AND m."roomId" = ${room}::text AND m."accountId" = ${account}::text
          AND m.id > ${name}_s.covers),
      ${enqueueSelectCte(name, select)}`;
  }

  /** The stored summary and the messages after it (at most `limit`, oldest first). */
  async load(c: ConversationRef, limit: number): Promise<SummaryState> {
    const rows = await this.sql<{ summary: string | null; covers: string; since: RawMessage[] }>(
      `WITH s AS (SELECT summary, "coversUpToId" AS covers FROM conversation_summaries WHERE ${CONV}
                  UNION ALL SELECT NULL, 0 LIMIT 1)
       SELECT s.summary, s.covers::text AS covers,
         (SELECT coalesce(json_agg(json_build_object('id', x.id::text, 'role', x.role, 'text', x.text,
             'sentAt', x."sentAt") ORDER BY x.id), '[]') FROM (
            SELECT id, role, text, "sentAt" FROM conversation_messages m
            WHERE m.platform = $1 AND m."roomId" = $2 AND m."accountId" = $3 AND m.id > s.covers
            ORDER BY m.id LIMIT $4) x) AS since
       FROM s`,
      [c.platform, c.roomId, c.accountId, limit],
    );
    const r = rows[0]!;
    return {
      summary: r.summary,
      coversUpToId: BigInt(r.covers),
      since: r.since.map((m) => ({
        id: BigInt(m.id),
        role: m.role === 'assistant' ? 'assistant' : 'user',
        text: m.text,
        sentAt: new Date(m.sentAt),
      })),
    };
  }

  /**
   * Stores a (redacted) summary covering messages up to `coversUpToId`, the call's usage row (`usageCte`,
   * from the llm_usage writer) and the work item's completion in ONE statement. The summary is written
   * only while the worker holds the item and the stored summary is still the one it refreshed.
   * Returns false when nothing was stored (claim lost, or another summary got there first).
   */
  async store(
    c: ConversationRef,
    s: { text: string; coversUpToId: bigint; previousCoversUpToId: bigint },
    item: Pick<ClaimedItem, 'id' | 'claimToken'>,
    usageCte: (p: SqlParams) => string | null,
  ): Promise<boolean> {
    const p = new SqlParams();
    const ctes = [completeCte(p, 'w', item)];
    const usage = usageCte(p);
    if (usage) ctes.push(usage);
    ctes.push(`s AS (INSERT INTO conversation_summaries (platform, "roomId", "accountId", summary, "coversUpToId",
        "updatedAt")
      SELECT ${p.add(c.platform)}, ${p.add(c.roomId)}, ${p.add(c.accountId)}, ${p.add(pgText(s.text))},
        ${p.add(s.coversUpToId.toString())}::bigint, now()
      WHERE EXISTS (SELECT 1 FROM w)
      ON CONFLICT (platform, "roomId", "accountId") DO UPDATE
        SET summary = EXCLUDED.summary, "coversUpToId" = EXCLUDED."coversUpToId", "updatedAt" = now()
        WHERE conversation_summaries."coversUpToId" = ${p.add(s.previousCoversUpToId.toString())}::bigint
      RETURNING 1)`);
    const rows = await this.sql<{ n: number }>(
      `WITH ${ctes.join(',\n')} SELECT (SELECT count(*)::int FROM s) AS n`,
      p.values,
    );
    return rows[0]?.n === 1;
  }
}

interface RawMessage {
  id: string;
  role: string;
  text: string;
  sentAt: string;
}

function pick(c: ConversationRef): ConversationRef {
  return { orgId: c.orgId, platform: c.platform, roomId: c.roomId, accountId: c.accountId };
}

/**
 * Retention (R-O2): a summary goes with its conversation's messages. It is deleted as soon as any message it
 * covers is past retention (so nothing older than the retention period lives on inside a summary; the next
 * summary is written from the messages that remain), and in any case when it was last written before
 * `before`. Runs before the messages themselves are purged.
 */
export async function purgeExpiredSummaries(db: Db, before: Date): Promise<number> {
  return db.$executeRawUnsafe(
    `DELETE FROM conversation_summaries s
     WHERE s."updatedAt" < $1 OR EXISTS (
       SELECT 1 FROM conversation_messages m
       WHERE m.platform = s.platform AND m."roomId" = s."roomId" AND m."accountId" = s."accountId"
         AND m.id <= s."coversUpToId" AND m."createdAt" < $1)`,
    before,
  );
}
