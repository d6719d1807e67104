import type { InboundMessage } from '../adapters/types';
import { detectLanguage } from '../brain/language';
import type { Db } from '../db/prisma';
import { sqlRunner, type Sql } from '../db/sql';
import type { Logger } from '../observability/logger';
import type { ContextSection, HistoryEntry, SenderProfile, TurnContext } from './types';

/** An optional context source (persons, tasks, goals, memories, knowledge). Failure degrades (R-X2). */
export interface ContextSource {
  name: string;
  load(input: { db: Db; msg: InboundMessage; sender: SenderProfile; now: Date; timezone: string; sql?: Sql }): Promise<ContextSection | null>;
}

export interface ContextBuilderOptions {
  db: Db;
  logger: Logger;
  defaultTimezone: string;
  historyLimit?: number;
  /** Organisation data (name, values, policies) is reused for this long: it forms the cached prefix. */
  orgCacheMs?: number;
  sources?: ContextSource[];
  /** Raw SQL for sources that read in one statement (defaults to running through Prisma). */
  sql?: Sql;
}

interface OrgInfo {
  org: TurnContext['org'];
  policies: TurnContext['policies'];
  loadedAt: number;
}

/** Formats "2026年11月22日(日) 10:30 (Asia/Tokyo)". */
export function formatNow(now: Date, timezone: string): string {
  const parts = new Intl.DateTimeFormat('ja-JP', { timeZone: timezone, year: 'numeric', month: 'numeric', day: 'numeric', weekday: 'short', hour: '2-digit', minute: '2-digit', hour12: false }).formatToParts(now);
  const g = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  return `${g('year')}年${g('month')}月${g('day')}日(${g('weekday')}) ${g('hour')}:${g('minute')} (${timezone})`;
}

/**
 * Gathers a turn's context in parallel (R-X1). Session state is the caller's (BrainStateManager) and
 * fails the turn; every other source here degrades to "unknown" and is named in `degraded`.
 */
export class ContextBuilder {
  private readonly orgCache = new Map<string, OrgInfo>();
  private readonly sql: Sql;

  constructor(private readonly o: ContextBuilderOptions) {
    this.sql = o.sql ?? sqlRunner(o.db);
  }

  async build(input: { msg: InboundMessage; sender: SenderProfile; room: TurnContext['room']; now: Date }): Promise<TurnContext> {
    const { msg, sender, now } = input;
    const degraded: string[] = [];
    const soft = async <T>(name: string, p: Promise<T>, fallback: T): Promise<T> => {
      try {
        return await p;
      } catch (err) {
        degraded.push(name);
        this.o.logger.warn({ source: name, err: (err as Error).name }, 'context source failed; continuing without it');
        return fallback;
      }
    };
    const orgP = soft('organisation', this.orgInfo(msg.orgId), null);
    const convP = soft('history', this.conversation(msg), { history: [] as HistoryEntry[], summary: null as string | null });
    const historyP = convP.then((c) => c.history);
    const summaryP = convP.then((c) => c.summary);
    // Sources start at once; the organisation (usually cached) only lends them its time zone.
    const timezone = this.orgCache.get(msg.orgId)?.org.timezone ?? this.o.defaultTimezone;
    const sectionsP = Promise.all((this.o.sources ?? []).map((s) =>
      soft(s.name, s.load({ db: this.o.db, msg, sender, now, timezone, sql: this.sql }), null)));
    const [org, history, summary, sections] = await Promise.all([orgP, historyP, summaryP, sectionsP]);
    return {
      org: org?.org ?? { id: msg.orgId, name: msg.orgId, timezone, values: '' },
      policies: org?.policies ?? [],
      sender,
      room: input.room,
      history,
      summary,
      now,
      nowText: formatNow(now, org?.org.timezone ?? timezone),
      message: msg,
      language: detectLanguage(msg.text),
      sections: sections.filter((s): s is ContextSection => s !== null),
      degraded,
    };
  }

  /** Drops cached organisation data (after a directory import). */
  invalidateOrg(orgId?: string): void {
    if (orgId) this.orgCache.delete(orgId);
    else this.orgCache.clear();
  }

  private async orgInfo(orgId: string): Promise<OrgInfo | null> {
    const hit = this.orgCache.get(orgId);
    if (hit && Date.now() - hit.loadedAt < (this.o.orgCacheMs ?? 30000)) return hit;
    const [org, policies] = await Promise.all([
      this.o.db.organization.findUnique({ where: { id: orgId } }),
      this.o.db.policy.findMany({ where: { orgId }, orderBy: [{ priority: 'desc' }, { id: 'asc' }] }),
    ]);
    if (!org) return null;
    const info: OrgInfo = {
      org: { id: org.id, name: org.name, timezone: org.timezone, values: org.values },
      policies: policies.map((p) => ({ id: p.id, title: p.title, content: p.content, rule: p.rule ?? undefined })),
      loadedAt: Date.now(),
    };
    this.orgCache.set(orgId, info);
    return info;
  }

  /** The last messages of this room + sender and the stored summary, in one statement. */
  private async conversation(msg: InboundMessage): Promise<{ history: HistoryEntry[]; summary: string | null }> {
    const rows = await this.sql<{ role: string; text: string; sentAt: Date; kind: string }>(
      `(SELECT role, text, "sentAt", 'm' AS kind FROM conversation_messages
         WHERE platform = $1 AND "roomId" = $2 AND "accountId" = $3 AND NOT (role = 'user' AND "platformMessageId" = $4)
         ORDER BY id DESC LIMIT $5)
       UNION ALL
       (SELECT 'summary', summary, "updatedAt", 's' FROM conversation_summaries WHERE platform = $1 AND "roomId" = $2 AND "accountId" = $3)`,
      [msg.platform, msg.roomId, msg.senderAccountId, msg.platformMessageId, this.o.historyLimit ?? 10]);
    const history = rows.filter((r) => r.kind === 'm').reverse()
      .map((r) => ({ role: r.role === 'assistant' ? 'assistant' as const : 'user' as const, text: r.text, at: new Date(r.sentAt).toISOString() }));
    return { history, summary: rows.find((r) => r.kind === 's')?.text ?? null };
  }
}
