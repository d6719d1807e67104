import type { ReplyOption } from '../core/chat';
import type { Db } from '../db/prisma';
import { pgText, SqlParams, sqlRunner, type Sql } from '../db/sql';

/**
 * A conversation is a room and the person the bot talks with there (the same key as a session): the
 * user's messages are stored under their account, and so is every bot message addressed to them — the
 * reply, a reminder notice, a post a tool makes for them — so the history the brain reads for a turn
 * (context/) is that conversation, in order.
 */
export interface ConversationRef {
  orgId: string;
  platform: string;
  roomId: string;
  /** The person's platform account. */
  accountId: string;
}

/** A message the person sent (the inbound message as stored). */
export interface UserMessage extends ConversationRef {
  text: string;
  platformMessageId: string;
  sentAt: Date;
}

/** A message the bot sent in the conversation. */
export interface BotMessage extends ConversationRef {
  text: string;
  options?: ReplyOption[];
  platformMessageId: string | null;
  sentAt: Date;
}

const COLUMNS = '"orgId", platform, "roomId", "accountId", role, text, "platformMessageId", options, "sentAt"';

/*
 * The context reads a conversation in id order (the order the rows were stored). Rows inserted by several
 * data-modifying CTEs of ONE statement get their ids in no defined order (PostgreSQL ran them last first), so a
 * statement stores at most one conversation message: the turn's opening statement the person's, its closing one
 * the reply, `append` a notice or a tool's post.
 */

/** CTE `name`: stores the user's message once (a retried turn stores nothing new). */
export function userMessageCte(p: SqlParams, name: string, m: UserMessage): string {
  const row = `${p.add(m.orgId)}::text, ${p.add(m.platform)}::text, ${p.add(m.roomId)}::text,
            ${p.add(m.accountId)}::text, 'user', ${p.add(m.text)}::text, ${p.add(m.platformMessageId)}::text,
            NULL::jsonb, ${p.add(m.sentAt)}::timestamp(3)`;
  return `${name} AS (INSERT INTO conversation_messages (${COLUMNS})
    VALUES (${row}) ON CONFLICT DO NOTHING RETURNING 1)`;
}

/** CTE `name`: appends a bot message. */
export function botMessageCte(p: SqlParams, name: string, m: BotMessage): string {
  const options = m.options ? JSON.stringify(m.options) : null;
  return `${name} AS (INSERT INTO conversation_messages (${COLUMNS})
    VALUES (${p.add(m.orgId)}, ${p.add(m.platform)}, ${p.add(m.roomId)}, ${p.add(m.accountId)}, 'assistant',
            ${p.add(pgText(m.text))}, ${p.add(m.platformMessageId)}, ${p.add(options)}::jsonb,
            ${p.add(m.sentAt)}) RETURNING 1)`;
}

/**
 * The single writer of `conversation_messages` (issue 9): the turn's statements include its fragments,
 * and a notice or a tool's post appends through {@link append}.
 */
export class ConversationLog {
  private readonly sql: Sql;

  constructor(db: Db, sql?: Sql) {
    this.sql = sql ?? sqlRunner(db);
  }

  /** Appends a bot message on its own (notices, posts by tools). */
  async append(m: BotMessage): Promise<void> {
    const p = new SqlParams();
    await this.sql(`WITH ${botMessageCte(p, 'b', m)} SELECT 1`, p.values);
  }
}

/** A bot message that asked a confirmation question and still shows its buttons. */
export interface OpenQuestion {
  id: bigint;
  platform: string;
  roomId: string;
  platformMessageId: string | null;
  text: string;
  options: ReplyOption[];
  createdAt: Date;
}

/**
 * The oldest `limit` questions whose buttons are open (options still an array of confirmation keys); a partial
 * index holds exactly these rows (migration 20261123070000_open_questions_index), so the predicate stays SQL.
 */
export function openQuestions(db: Db, limit: number): Promise<OpenQuestion[]> {
  return db.$queryRaw<OpenQuestion[]>`
    SELECT id, platform, "roomId", "platformMessageId", text, options, "createdAt"
    FROM conversation_messages
    WHERE role = 'assistant' AND jsonb_typeof(options) = 'array' AND (options -> 0 ->> 'key') LIKE 'h1:%'
    ORDER BY id LIMIT ${limit}`;
}

/**
 * Closes a question: its options become `{closed, note, choices}`. Conditional on the buttons still being open,
 * so of several instances one closes it; false when another did.
 */
export async function closeQuestion(db: Db, id: bigint, state: string, note: string): Promise<boolean> {
  const n = await db.$executeRaw`
    UPDATE conversation_messages
    SET options = jsonb_build_object('closed', ${state}::text, 'note', ${note}::text, 'choices', options)
    WHERE id = ${id} AND jsonb_typeof(options) = 'array'`;
  return n > 0;
}

/** Deletes messages older than `before` (retention). */
export async function purgeConversations(db: Db, before: Date): Promise<number> {
  return (await db.conversationMessage.deleteMany({ where: { createdAt: { lt: before } } })).count;
}
