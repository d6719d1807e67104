import type { Directory } from '../authorization/directory';
import type { DepartmentNode } from '../authorization/scope';
import type { InboundMessage } from '../core/chat';
import { calendarLine, readClosingDays } from '../core/business-calendar';
import { detectLanguage } from '../core/language';
import type { Db } from '../db/prisma';
import { sqlRunner, type Sql } from '../db/sql';
import { standardParams, type SqlContextSource } from './sql-source';
import type { Logger } from '../observability/logger';
import { RECENT_MESSAGES } from './conversation-summaries';
import type { ContextSection, HistoryEntry, RoomMember, SenderProfile, TurnContext } from './types';

/** An optional context source (persons, tasks, goals, memories, knowledge). Failure degrades (R-X2). */
export interface ContextSource {
  name: string;
  /** A source that is not a SQL source and reads the room's members (persons): loaded once they are known. */
  usesRoomMembers?: boolean;
  /** SQL sources (see sql-source.ts) also give their query and renderer, so a turn reads them all at once. */
  query?: string;
  render?: (
    data: never,
    input: {
      msg: InboundMessage;
      sender: SenderProfile;
      now: Date;
      timezone: string;
      roomMembers?: readonly RoomMember[];
    },
  ) => ContextSection | null;
  load(input: {
    db: Db;
    msg: InboundMessage;
    sender: SenderProfile;
    now: Date;
    timezone: string;
    sql?: Sql;
    roomMembers?: readonly RoomMember[];
    /** The organisation's departments from the directory cache, when the service keeps one. */
    departments?: (orgId: string) => Promise<readonly DepartmentNode[]>;
    /** The organisation's directory from the directory cache, when the service keeps one. */
    directory?: (orgId: string) => Promise<Directory>;
    /** Whether the organisation has knowledge documents (cached); absent → search as if it had. */
    hasKnowledge?: (orgId: string) => Promise<boolean>;
  }): Promise<ContextSection | null>;
}

export interface ContextBuilderOptions {
  db: Db;
  logger: Logger;
  defaultTimezone: string;
  historyLimit?: number;
  /**
   * Organisation data (name, values, policies) is reused for this long when there is no `orgInfo`: it forms the
   * cached prefix.
   */
  orgCacheMs?: number;
  /**
   * The organisation and its policies from the service's per-organisation cache, which an import's notification
   * clears (`src/app/org-caches.ts`); absent → read here and kept for `orgCacheMs`.
   */
  orgInfo?: (orgId: string) => Promise<OrgInfo | null>;
  sources?: ContextSource[];
  /** Raw SQL for sources that read in one statement (defaults to running through Prisma). */
  sql?: Sql;
  /**
   * The platform's members of the message's room (ChatWork; names only, no authority), read while the
   * statement runs and given to the sources (persons). Never throws; absent → none.
   */
  roomMembers?: (msg: InboundMessage) => Promise<readonly RoomMember[]>;
  /** The organisation's departments from the directory cache (sources read them instead of the database). */
  departments?: (orgId: string) => Promise<readonly DepartmentNode[]>;
  /** The organisation's directory from the directory cache (the persons source reads it instead of the database). */
  directory?: (orgId: string) => Promise<Directory>;
  /** Whether the organisation has knowledge documents, cached per organisation (no search when it has none). */
  hasKnowledge?: (orgId: string) => Promise<boolean>;
}

/**
 * A turn's context read started before its first statement answered, for the member the cached directory maps
 * the sender's account to ({@link ContextBuilder.prefetch}). A guess, never an authority: see there.
 */
export interface ContextPrefetch {
  /** The statement's parameters: the message's, and the member the cached directory named (the rows are theirs). */
  params: readonly unknown[];
  /** The combined statement's rows (history, summary, the SQL sources), as {@link ContextBuilder.build} reads them. */
  rows: Promise<Record<string, unknown>[]>;
  /**
   * The room's members (names for the persons context; no authority), asked for at the same time (a ChatWork
   * request when the cache has none for the room). Absent in a direct chat.
   */
  members?: Promise<readonly RoomMember[]>;
}

/** The organisation as a turn's context shows it: its name, time zone and values, and its policies. */
export interface OrgInfo {
  org: TurnContext['org'];
  policies: TurnContext['policies'];
}

/** Reads an organisation and its policies (null when there is no such organisation). */
export async function loadOrgInfo(db: Db, orgId: string): Promise<OrgInfo | null> {
  const [org, policies] = await Promise.all([
    db.organization.findUnique({ where: { id: orgId } }),
    db.policy.findMany({ where: { orgId }, orderBy: [{ priority: 'desc' }, { id: 'asc' }] }),
  ]);
  if (!org) return null;
  return {
    org: {
      id: org.id,
      name: org.name,
      timezone: org.timezone,
      values: org.values,
      closingDays: readClosingDays(org.closingDays),
    },
    policies: policies.map((p) => ({ id: p.id, title: p.title, content: p.content, rule: p.rule ?? undefined })),
  };
}

/** One formatter per time zone, built once (a new Intl.DateTimeFormat per turn cost ICU time: issue 10). */
const nowFormatters = new Map<string, Intl.DateTimeFormat>();

/** Formats "2026年11月22日(日) 10:30 (Asia/Tokyo)". */
export function formatNow(now: Date, timezone: string): string {
  let f = nowFormatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('ja-JP', {
      timeZone: timezone,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hour12: false,
    });
    nowFormatters.set(timezone, f);
  }
  const parts = f.formatToParts(now);
  const g = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  return `${g('year')}年${g('month')}月${g('day')}日(${g('weekday')}) ${g('hour')}:${g('minute')} (${timezone})`;
}

/** The business calendar line of the turn; absent when it cannot be computed (an unknown time zone). */
function calendarText(now: Date, timezone: string, closingDays: TurnContext['org']['closingDays']): string | undefined {
  try {
    return calendarLine(now, timezone, { closingDays: closingDays ?? [] });
  } catch {
    return undefined;
  }
}

/**
 * Gathers a turn's context in parallel (R-X1). Session state is the caller's (Sessions) and
 * fails the turn; every other source here degrades to "unknown" and is named in `degraded`.
 */
export class ContextBuilder {
  private readonly orgCache = new Map<string, OrgInfo & { loadedAt: number }>();
  private readonly sql: Sql;

  /** The combined statements of a member audience (every source) and of a public one (none), built once. */
  private readonly memberStatement: string;
  private readonly publicStatement = combinedStatement([]);

  constructor(private readonly o: ContextBuilderOptions) {
    this.sql = o.sql ?? sqlRunner(o.db);
    this.memberStatement = combinedStatement((o.sources ?? []).filter(isSqlSource));
  }

  /** `audience` defaults to {@link defaultAudience} the room's authority and the sender's level. */
  async build(input: {
    msg: InboundMessage;
    sender: SenderProfile;
    room: TurnContext['room'];
    now: Date;
    audience?: TurnContext['audience'];
    /** A read started early ({@link prefetch}): used only when it was made for this message and sender. */
    prefetched?: ContextPrefetch | null;
  }): Promise<TurnContext> {
    const { msg, sender, now } = input;
    const degraded: string[] = [];
    const degrade = (name: string, err: unknown): void => {
      degraded.push(name);
      this.o.logger.warn({ source: name, err: (err as Error).name }, 'context source failed; continuing without it');
    };
    const soft = async <T>(name: string, p: Promise<T>, fallback: T): Promise<T> => {
      try {
        return await p;
      } catch (err) {
        degrade(name, err);
        return fallback;
      }
    };
    const orgP = soft('organisation', this.orgInfo(msg.orgId), null);
    // Sources start at once; the organisation (usually cached) only lends them its time zone.
    const timezone = this.orgCache.get(msg.orgId)?.org.timezone ?? this.o.defaultTimezone;
    const audience = input.audience ?? defaultAudience(input.room.authority, sender);
    // A public audience reads no organisation data: the sources are not even queried (issue 8).
    const sources = audience === 'member' ? (this.o.sources ?? []) : [];
    // An early read counts only for the member it was made for, and only for a member audience (whose statement
    // it is): a sender the first statement resolved otherwise gets the usual read, and the early one is dropped.
    const pre = input.prefetched;
    const early = pre && audience === 'member' && sameParams(pre.params, standardParams(msg, sender)) ? pre.rows : null;
    const membersP: Promise<readonly RoomMember[]> =
      audience === 'member' && this.o.roomMembers && !msg.isDirect
        ? soft('room_members', pre?.members ?? this.o.roomMembers(msg), [])
        : Promise.resolve([]);
    const [org, gathered] = await Promise.all([
      orgP,
      this.gather(sources, msg, sender, now, timezone, soft, degrade, membersP, early),
    ]);
    const { history, summary, sections } = gathered;
    const zone = org?.org.timezone ?? timezone;
    return {
      org: org?.org ?? { id: msg.orgId, name: msg.orgId, timezone, values: '' },
      policies: org?.policies ?? [],
      sender,
      room: input.room,
      audience,
      history,
      summary,
      now,
      nowText: formatNow(now, zone),
      calendarText: calendarText(now, zone, org?.org.closingDays),
      message: msg,
      language: detectLanguage(msg.answerText ?? msg.text, [...history].reverse().find((h) => h.role === 'user')?.text),
      sections: sections.filter((s): s is ContextSection => s !== null),
      degraded,
    };
  }

  /** Drops cached organisation data (after a directory import). */
  invalidateOrg(orgId?: string): void {
    if (orgId) this.orgCache.delete(orgId);
    else this.orgCache.clear();
  }

  /**
   * Starts the turn's combined context read (history, summary, the SQL sources) for the member the cached
   * directory maps the sender's account to, so it runs beside the turn's first statement instead of after it
   * (issue 10: one round trip less before the model), and asks for the room's members at the same time. Null when
   * there is no cached directory or the account maps to no active member. The directory is only a guess here:
   * {@link build} uses the rows only when the actor the first statement read from the database — the trust
   * boundary — is that same member with a member audience (a member has one in a listed member room, in a room the
   * directory does not list and in a direct chat; a room the directory lists as public gives everyone a public one);
   * otherwise they are dropped unread. Never rejects; a failed read fails the build's use of it like its own read.
   * Kept for its measured gain (decision 0009).
   */
  async prefetch(msg: InboundMessage): Promise<ContextPrefetch | null> {
    if (!this.o.directory) return null;
    try {
      const memberId = memberOfAccount(await this.o.directory(msg.orgId), msg.platform, msg.senderAccountId);
      if (!memberId) return null;
      const params = standardParams(msg, { memberId });
      const rows = this.sql<Record<string, unknown>>(this.memberStatement, params);
      const members = this.o.roomMembers && !msg.isDirect ? this.o.roomMembers(msg) : undefined;
      // A dropped read must not surface as an unhandled rejection; build() still sees its failure.
      rows.catch(() => undefined);
      members?.catch(() => undefined);
      return { params, rows, members };
    } catch {
      return null;
    }
  }

  /**
   * The organisation and its policies: from the per-organisation cache an import's notification clears (`orgInfo`,
   * the service's), else read and kept here for `orgCacheMs`. Either way the last one seen lends the next turn its
   * time zone at once.
   */
  private async orgInfo(orgId: string): Promise<OrgInfo | null> {
    if (this.o.orgInfo) {
      const info = await this.o.orgInfo(orgId);
      if (info) this.orgCache.set(orgId, { ...info, loadedAt: Date.now() });
      return info;
    }
    const hit = this.orgCache.get(orgId);
    if (hit && Date.now() - hit.loadedAt < (this.o.orgCacheMs ?? 30000)) return hit;
    const info = await loadOrgInfo(this.o.db, orgId);
    if (info) this.orgCache.set(orgId, { ...info, loadedAt: Date.now() });
    return info;
  }

  /**
   * History, summary and every source in ONE statement when the sources are SQL sources (the usual
   * case); if that statement fails, each part is read on its own so one failing source only degrades
   * itself (R-X2).
   */
  private async gather(
    sources: ContextSource[],
    msg: InboundMessage,
    sender: SenderProfile,
    now: Date,
    timezone: string,
    soft: <T>(name: string, p: Promise<T>, fallback: T) => Promise<T>,
    degrade: (name: string, err: unknown) => void,
    membersP: Promise<readonly RoomMember[]>,
    early: Promise<Record<string, unknown>[]> | null,
  ): Promise<{ history: HistoryEntry[]; summary: string | null; sections: ContextSection[] }> {
    const load = (src: ContextSource, roomMembers: readonly RoomMember[] = []) =>
      soft(
        src.name,
        src.load({
          db: this.o.db,
          msg,
          sender,
          now,
          timezone,
          sql: this.sql,
          roomMembers,
          departments: this.o.departments,
          directory: this.o.directory,
          hasKnowledge: this.o.hasKnowledge,
        }),
        null,
      );
    // Sources that are not SQL sources (knowledge: its reader filter needs the directory first; persons: from the
    // cached directory, once the room's members are known) are read beside the combined statement; their sections
    // keep their place in the list.
    const others = new Map(
      sources
        .filter((s) => !isSqlSource(s))
        .map((s) => [s, s.usesRoomMembers ? membersP.then((rm) => load(s, rm)) : load(s)] as const),
    );
    const inOrder = async (folded: Map<ContextSource, ContextSection | null>) =>
      Promise.all(sources.map((s) => (others.has(s) ? others.get(s)! : (folded.get(s) ?? null))));
    const sqlSources = sources.filter(isSqlSource);
    const render = (src: ContextSource, data: unknown, roomMembers: readonly RoomMember[]): ContextSection | null => {
      try {
        return (src as SqlContextSource<unknown>).render(data, { msg, sender, now, timezone, roomMembers });
      } catch (err) {
        degrade(src.name, err);
        return null;
      }
    };
    try {
      const [rows, roomMembers] = await Promise.all([
        early ??
          this.sql<Record<string, unknown>>(
            sources.length > 0 ? this.memberStatement : this.publicStatement,
            standardParams(msg, sender),
          ),
        membersP,
      ]);
      const row = rows[0]!;
      const folded = new Map(sqlSources.map((src, i) => [src, render(src, row[`s${i}`], roomMembers)] as const));
      return {
        history: toHistory(row.history as HistoryRow[]),
        summary: (row.summary as string | null) ?? null,
        sections: (await inOrder(folded)).filter((x): x is ContextSection => x !== null),
      };
    } catch (err) {
      this.o.logger.warn({ err: (err as Error).name }, 'combined context read failed; reading each part on its own');
    }
    const roomMembers = await membersP;
    const [conv, sections] = await Promise.all([
      soft('history', this.conversation(msg, sender), {
        history: [] as HistoryEntry[],
        summary: null as string | null,
      }),
      Promise.all(sources.map((src) => others.get(src) ?? load(src, roomMembers))),
    ]);
    return { ...conv, sections: sections.filter((x): x is ContextSection => x !== null) };
  }

  /** The last messages of this room + sender and the stored summary, in one statement. */
  private async conversation(
    msg: InboundMessage,
    sender: SenderProfile,
  ): Promise<{ history: HistoryEntry[]; summary: string | null }> {
    const rows = await this.sql<{ history: HistoryRow[]; summary: string | null }>(
      `SELECT ${ALL_PARAMS}, ${HISTORY_SQL} AS history, ${SUMMARY_SQL} AS summary`,
      standardParams(msg, sender),
    );
    return { history: toHistory(rows[0]!.history), summary: rows[0]!.summary ?? null };
  }
}

interface HistoryRow {
  role: string;
  text: string;
  sentAt: string;
}

/**
 * The last {@link RECENT_MESSAGES} messages of this room + sender, without the current one (standard parameters
 * $3–$6); older ones reach the model through the conversation summary.
 */
const HISTORY_SQL = `(SELECT coalesce(json_agg(h ORDER BY h.id), '[]') FROM (
    SELECT id, role, text, "sentAt" FROM conversation_messages
    WHERE platform = $3 AND "roomId" = $4 AND "accountId" = $5 AND NOT (role = 'user' AND "platformMessageId" = $6)
    ORDER BY id DESC LIMIT ${RECENT_MESSAGES}) h)`;
const SUMMARY_SQL = `(SELECT summary FROM conversation_summaries
  WHERE platform = $3 AND "roomId" = $4 AND "accountId" = $5)`;
/** Names every standard parameter once (Postgres needs a type for each parameter a statement receives). */
const ALL_PARAMS = '$1::text AS p_org, $2::text AS p_member';

function toHistory(rows: HistoryRow[]): HistoryEntry[] {
  return rows.map((r) => ({
    role: r.role === 'assistant' ? ('assistant' as const) : ('user' as const),
    text: r.text,
    at: new Date(r.sentAt).toISOString(),
  }));
}

/** Public rooms and senders at level 0 (strangers, unknown senders in public rooms) are a public audience. */
export function defaultAudience(
  authority: TurnContext['room']['authority'],
  sender: Pick<SenderProfile, 'level'>,
): TurnContext['audience'] {
  return authority === 'public' || sender.level === 0 ? 'public' : 'member';
}

function isSqlSource(src: ContextSource): boolean {
  return typeof src.query === 'string' && typeof src.render === 'function';
}

/** History, summary and each SQL source (`s0`, `s1` …) in one statement over the standard parameters. */
function combinedStatement(sqlSources: readonly ContextSource[]): string {
  const cols = sqlSources.map((src, i) => `${src.query!} AS s${i}`);
  return `SELECT ${[`${ALL_PARAMS}, ${HISTORY_SQL} AS history, ${SUMMARY_SQL} AS summary`, ...cols].join(', ')}`;
}

/** Each cached directory's account → active member index, built once per directory. */
const accountIndexes = new WeakMap<Directory, Map<string, string>>();

/** The active member a platform account belongs to in a directory, or null. */
export function memberOfAccount(directory: Directory, platform: string, accountId: string): string | null {
  let index = accountIndexes.get(directory);
  if (!index) {
    index = new Map();
    for (const m of directory.members)
      for (const a of m.accounts ?? []) index.set(`${a.platform}\u0000${a.accountId}`, m.id);
    accountIndexes.set(directory, index);
  }
  return index.get(`${platform}\u0000${accountId}`) ?? null;
}

/** Whether two statements' parameters are the same values (the early read is then the read the turn would make). */
function sameParams(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
