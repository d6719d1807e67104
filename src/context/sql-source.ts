import type { InboundMessage } from '../core/chat';
import type { Db } from '../db/prisma';
import { sqlRunner, type Sql } from '../db/sql';
import type { ContextSection, RoomMember, SenderProfile } from './types';

/**
 * The parameters every context query may use, always in this order:
 * $1 organisation id, $2 sender's member id (null when unknown), $3 platform, $4 room id,
 * $5 sender's account id, $6 the current message's platform id.
 */
export function standardParams(msg: InboundMessage, sender: Pick<SenderProfile, 'memberId'>): unknown[] {
  return [msg.orgId, sender.memberId, msg.platform, msg.roomId, msg.senderAccountId, msg.platformMessageId];
}

export interface RenderInput {
  msg: InboundMessage;
  sender: SenderProfile;
  now: Date;
  timezone: string;
  /** The platform's members of the room (names only; see context/room-members.ts). */
  roomMembers?: readonly RoomMember[];
}

/**
 * A context source read by ONE SQL expression over the standard parameters, returning JSON.
 * The ContextBuilder folds every such expression of a turn into a single statement.
 */
export interface SqlContextSource<T> {
  name: string;
  /** A parenthesised scalar subquery returning JSON (e.g. `(SELECT coalesce(json_agg(x), '[]') FROM …)`). */
  query: string;
  render(data: T, input: RenderInput): ContextSection | null;
}

/** Runs one SQL source on its own (tests, or a builder without folding). */
export async function loadSqlSource<T>(
  src: SqlContextSource<T>,
  input: RenderInput & { db: Db; sql?: Sql },
): Promise<ContextSection | null> {
  // Postgres wants exactly the parameters a statement uses: pass $1..$max of the standard list.
  const max = Math.max(0, ...[...src.query.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
  // Every passed parameter is named once with its type (all are text), so one the query skips is typed too.
  const named = Array.from({ length: max }, (_, i) => `, $${i + 1}::text AS p${i + 1}`).join('');
  const rows = await (input.sql ?? sqlRunner(input.db))<{ data: T }>(
    `SELECT ${src.query} AS data${named}`,
    standardParams(input.msg, input.sender).slice(0, max),
  );
  return src.render(rows[0]!.data, input);
}

/** Declares a SQL source that also satisfies the plain `ContextSource` interface (its `load`). */
export function defineSqlSource<T>(src: SqlContextSource<T>): SqlContextSource<T> & {
  load(input: RenderInput & { db: Db; sql?: Sql }): Promise<ContextSection | null>;
} {
  return { ...src, load: (input) => loadSqlSource(src, input) };
}
