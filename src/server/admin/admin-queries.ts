import type { Db } from '../../db/prisma';
import type { Sql } from '../../db/sql';
import { startOfDay } from '../../brain/cost-guard';
import { addDays, formatZonedDateTime, parseYMD } from '../../core/zoned-time';
import { safeRedactText, safeRedactValue } from '../../observability/redact';
import { pendingEffect } from '../../confirmations/confirmation-text';
import { renderEffect } from '../../tools/describe';
import { purposeGroup, purposeLabel } from './labels';
import { proposalInWords } from './proposal-words';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** One bucket of the overview charts (R-O4, seed 003 §15.2). */
export interface OverviewBucket {
  t: string;
  turns: number;
  p50Ms: number | null;
  p95Ms: number | null;
  confirmRate: number | null;
  blockRate: number | null;
  /** Turns the AuthorizationGate refused ÷ user turns. */
  denialRate: number | null;
  costUsd: number;
  /** Cache-read tokens ÷ all input tokens (input + cache write + cache read). */
  cacheReadShare: number | null;
  /** Work items waiting or running at the end of the bucket. */
  queueDepth: number;
}

/** Bucket starts: hourly for 24 h, daily (organisation days) for 30 days. */
export function bucketStarts(range: '24h' | '30d', now: Date, timezone: string): { starts: Date[]; widthMs: number } {
  if (range === '24h') {
    const end = Math.floor(now.getTime() / HOUR) * HOUR;
    return { starts: Array.from({ length: 24 }, (_, i) => new Date(end - (23 - i) * HOUR)), widthMs: HOUR };
  }
  const today = startOfDay(now, timezone).getTime();
  return { starts: Array.from({ length: 30 }, (_, i) => new Date(today - (29 - i) * DAY)), widthMs: DAY };
}

/** The overview series in one statement (user turns, latency, rates, cost, cache share, queue depth). */
export async function overview(
  sql: Sql,
  range: '24h' | '30d',
  now: Date,
  timezone: string,
): Promise<{
  buckets: OverviewBucket[];
  today: Record<string, number | null>;
  cost: { byModel: { name: string; usd: number }[]; byPurpose: { name: string; usd: number }[] };
}> {
  const { starts, widthMs } = bucketStarts(range, now, timezone);
  const rows = await sql<Record<string, string | number | null>>(
    `WITH b AS (SELECT s AT TIME ZONE 'UTC' AS s, (s + ($2::int * interval '1 millisecond')) AT TIME ZONE 'UTC' AS e
                FROM unnest($1::timestamptz[]) AS s)
     SELECT to_char(b.s, 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS t, tr.*, u.*,
            (SELECT count(*) FROM work_items w
              WHERE w."createdAt" < b.e AND (w."finishedAt" IS NULL OR w."finishedAt" >= b.e))::int AS queue
     FROM b
     LEFT JOIN LATERAL (
       SELECT count(*)::int AS turns,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY "totalMs") AS p50,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY "totalMs") AS p95,
              count(*) FILTER (WHERE decision IN ('CONFIRM', 'SHADOW_CONFIRM'))::int AS confirms,
              count(*) FILTER (WHERE decision IN ('BLOCK', 'SHADOW_BLOCK'))::int AS blocks,
              count(*) FILTER (WHERE decision IN ('DENIED', 'SHADOW_DENIED'))::int AS denials
       FROM turn_records WHERE kind = 'user_request' AND "createdAt" >= b.s AND "createdAt" < b.e) tr ON true
     LEFT JOIN LATERAL (
       SELECT coalesce(sum("costUsd"), 0)::float AS cost, sum("cacheReadTokens")::float AS cache_read,
              sum("inputTokens" + "cacheWriteTokens" + "cacheReadTokens")::float AS all_input
       FROM llm_usage WHERE "createdAt" >= b.s AND "createdAt" < b.e) u ON true
     ORDER BY b.s`,
    [starts.map((s) => s.toISOString()), widthMs],
  );
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  const buckets = rows.map((r) => {
    const turns = Number(r.turns ?? 0);
    return {
      t: String(r.t),
      turns,
      p50Ms: num(r.p50),
      p95Ms: num(r.p95),
      confirmRate: turns ? Number(r.confirms) / turns : null,
      blockRate: turns ? Number(r.blocks) / turns : null,
      denialRate: turns ? Number(r.denials) / turns : null,
      costUsd: Number(r.cost ?? 0),
      cacheReadShare: r.all_input ? Number(r.cache_read) / Number(r.all_input) : null,
      queueDepth: Number(r.queue ?? 0),
    };
  });
  const [d] = await sql<Record<string, string | number | null>>(
    `WITH w AS (SELECT $1::timestamptz AT TIME ZONE 'UTC' AS day, $2::timestamptz AT TIME ZONE 'UTC' AS month),
     t AS (SELECT decision, "reasonCode", "totalMs", confidence FROM turn_records, w WHERE kind = 'user_request'
       AND "createdAt" >= w.day)
     SELECT (SELECT count(*) FROM t)::int AS turns, (SELECT avg("totalMs") FROM t)::float AS avg_ms,
            (SELECT avg((confidence->>'overall')::float) FROM t
              WHERE jsonb_typeof(confidence->'overall') = 'number') AS avg_confidence,
            (SELECT count(*) FROM t WHERE decision IN ('CONFIRM', 'SHADOW_CONFIRM'))::int AS confirms,
            (SELECT count(*) FROM t WHERE decision IN ('BLOCK', 'SHADOW_BLOCK'))::int AS blocks,
            (SELECT count(*) FROM t WHERE decision IN ('DENIED', 'SHADOW_DENIED'))::int AS denials,
            (SELECT count(*) FROM t WHERE "reasonCode" IN ('T_UNKNOWN_PERSON', 'T_UNKNOWN_DEPARTMENT'))::int
              AS unknown_names,
            (SELECT count(*) FROM pending_actions, w WHERE "createdAt" >= w.day)::int AS asked,
            (SELECT count(*) FROM pending_actions, w WHERE "createdAt" >= w.day
              AND status IN ('approved', 'executed', 'failed'))::int AS approved,
            (SELECT count(*) FROM pending_actions, w WHERE "createdAt" >= w.day AND status = 'cancelled')::int
              AS cancelled,
            (SELECT count(*) FROM pending_actions, w WHERE "createdAt" >= w.day AND status = 'expired')::int
              AS expired,
            (SELECT count(*) FROM pending_actions, w WHERE "createdAt" >= w.day AND status = 'pending')::int
              AS waiting,
            (SELECT sum("cacheReadTokens")::float
                    / nullif(sum("inputTokens" + "cacheWriteTokens" + "cacheReadTokens"), 0)
              FROM llm_usage, w WHERE "createdAt" >= w.day)::float AS cache_share,
            (SELECT coalesce(sum("costUsd"), 0) FROM llm_usage, w WHERE "createdAt" >= w.day)::float AS cost_today,
            (SELECT coalesce(sum("costUsd"), 0) FROM llm_usage, w WHERE "createdAt" >= w.month)::float AS cost_month,
            (SELECT count(*) FROM work_items WHERE state IN ('queued', 'running'))::int AS queue`,
    [startOfDay(now, timezone).toISOString(), monthStart(now, timezone).toISOString()],
  );
  const costs = await sql<{ model: string; purpose: string; kind: string | null; cost: number; calls: number }>(
    `SELECT u.model, u.purpose, t.kind, sum(u."costUsd")::float AS cost, count(*)::int AS calls
     FROM llm_usage u LEFT JOIN turn_records t ON t.id = u."turnId"
     WHERE u."createdAt" >= $1::timestamptz AT TIME ZONE 'UTC'
     GROUP BY 1, 2, 3`,
    [(range === '24h' ? startOfDay(now, timezone) : starts[0]!).toISOString()],
  );
  const byModel = new Map<string, number>();
  const byPurpose = new Map<string, number>();
  for (const c of costs) {
    byModel.set(c.model, (byModel.get(c.model) ?? 0) + Number(c.cost));
    const group = purposeGroup(c.purpose, c.kind);
    byPurpose.set(group, (byPurpose.get(group) ?? 0) + Number(c.cost));
  }
  const sorted = (m: Map<string, number>) => [...m].map(([name, usd]) => ({ name, usd })).sort((a, b) => b.usd - a.usd);
  return {
    buckets,
    today: Object.fromEntries(Object.entries(d ?? {}).map(([k, v]) => [k, num(v)])),
    cost: { byModel: sorted(byModel), byPurpose: sorted(byPurpose) },
  };
}

function monthStart(now: Date, timezone: string): Date {
  const day = Number(new Intl.DateTimeFormat('en-US', { timeZone: timezone, day: 'numeric' }).format(now));
  return startOfDay(new Date(startOfDay(now, timezone).getTime() - (day - 1) * DAY + HOUR), timezone);
}

/** Audit log filters (R-O4): person, room, reason code, decision, date range, free text in input/reply. */
export interface AuditFilter {
  person?: string;
  room?: string;
  reason?: string;
  decision?: string;
  kind?: string;
  from?: string;
  to?: string;
  q?: string;
  limit?: number;
  before?: string;
  /** The most rows one answer may hold (the CSV export allows more than a page). */
  max?: number;
}

/** One audit row as the page and the CSV export read it. */
export type AuditRow = Record<string, unknown> & {
  id: string;
  createdAt: Date;
  kind: string;
  decision: string;
  reasonCode: string;
  member: string | null;
  room: string;
  costUsd: number;
  input: string | null;
  reply: string | null;
  critique: string | null;
};

/** A `YYYY-MM-DD` day of the organisation as its first instant (or the next day's, for an end date). */
function dayStart(s: string | undefined, timezone: string, next = false): Date | undefined {
  const ymd = s ? parseYMD(s.slice(0, 10)) : undefined;
  if (!ymd) return undefined;
  return new Date(formatZonedDateTime(next ? addDays(ymd, 1) : ymd, '00:00', timezone));
}

/** Turn records (already redacted when written) matching the filter, newest first. */
export async function auditLog(db: Db, f: AuditFilter, timezone = 'Asia/Tokyo'): Promise<AuditRow[]> {
  const persons = f.person
    ? await db.member.findMany({
        where: { OR: [{ id: f.person }, { name: { contains: f.person } }, { aliases: { has: f.person } }] },
        select: { id: true },
      })
    : [];
  const rooms = f.room
    ? await db.room.findMany({
        where: { OR: [{ externalId: f.room }, { name: { contains: f.room } }] },
        select: { externalId: true },
      })
    : [];
  const date = (s: string | undefined, next = false) => dayStart(s, timezone, next);
  const rows = await db.turnRecord.findMany({
    where: {
      ...(f.person ? { OR: [{ memberId: { in: persons.map((p) => p.id) } }, { accountId: f.person }] } : {}),
      ...(f.room ? { roomId: { in: [f.room, ...rooms.map((r) => r.externalId)] } } : {}),
      ...(f.reason ? { reasonCode: { startsWith: f.reason } } : {}),
      ...(f.decision ? { decision: f.decision } : {}),
      ...(f.kind ? { kind: f.kind } : {}),
      ...(f.q ? { OR: [{ inputRedacted: { contains: f.q } }, { finalReply: { contains: f.q } }] } : {}),
      createdAt: {
        ...(date(f.from) ? { gte: date(f.from) } : {}),
        ...(date(f.to, true) ? { lt: date(f.to, true) } : {}),
        ...(f.before && !Number.isNaN(Date.parse(f.before)) ? { lt: new Date(f.before) } : {}),
      },
    },
    orderBy: { createdAt: 'desc' },
    take: Math.min(Math.max(f.limit ?? 50, 1), f.max ?? 200),
    select: {
      id: true,
      createdAt: true,
      kind: true,
      platform: true,
      roomId: true,
      accountId: true,
      memberId: true,
      decision: true,
      reasonCode: true,
      guardianAction: true,
      guardianReason: true,
      authResult: true,
      authReason: true,
      finalDecider: true,
      totalMs: true,
      llmMs: true,
      inputTokens: true,
      outputTokens: true,
      costUsd: true,
      inputRedacted: true,
      finalReply: true,
      selfCritique: true,
    },
  });
  const [names, roomNames] = await Promise.all([
    memberNames(
      db,
      rows.map((r) => r.memberId),
    ),
    roomLabels(
      db,
      rows.map((r) => r.roomId),
    ),
  ]);
  return rows.map((r) => ({
    ...r,
    costUsd: Number(r.costUsd),
    member: r.memberId ? (names.get(r.memberId) ?? r.memberId) : null,
    room: roomNames.get(r.roomId) ?? r.roomId,
    input: clip(answerInWords(r.inputRedacted, r.reasonCode), f.max && f.max > 200 ? 2000 : 160),
    reply: clip(r.finalReply, f.max && f.max > 200 ? 2000 : 160),
    inputRedacted: undefined,
    finalReply: undefined,
    critique: (r.selfCritique as { verdict?: string } | null)?.verdict ?? null,
    selfCritique: undefined,
  }));
}

/** Everything about one turn for the inspector: the record, its LLM calls, its pending action and its links. */
export async function turnDetail(
  db: Db,
  id: string,
  timezone = 'Asia/Tokyo',
  now = new Date(),
  serverName?: (serverId: string) => string | undefined,
): Promise<Record<string, unknown> | null> {
  const turn = await db.turnRecord.findUnique({ where: { id } });
  if (!turn) return null;
  const answered = (turn.proposals as { pendingActionId?: string }[] | null)?.find(
    (p) => p.pendingActionId,
  )?.pendingActionId;
  const [calls, names, rooms, asked, decidedHere] = await Promise.all([
    db.llmUsage.findMany({ where: { turnId: id }, orderBy: { id: 'asc' } }),
    memberNames(db, [turn.memberId]),
    roomLabels(db, [turn.roomId]),
    // The confirmation this turn asked (linked by the pending action, or by the turn's execution record).
    db.pendingAction.findMany({
      where: {
        OR: [
          { turnId: id },
          ...(typeof (turn.execution as { pendingActionId?: unknown } | null)?.pendingActionId === 'string'
            ? [{ id: (turn.execution as { pendingActionId: string }).pendingActionId }]
            : []),
        ],
      },
    }),
    // The confirmation this turn answered: named in its proposals (approved), else the one decided in it.
    answered
      ? db.pendingAction.findMany({ where: { id: answered } })
      : db.pendingAction.findMany({
          where: {
            platform: turn.platform,
            roomId: turn.roomId,
            accountId: turn.accountId,
            decidedAt: { gte: new Date(turn.createdAt.getTime() - turn.totalMs - 5000), lte: turn.createdAt },
          },
        }),
  ]);
  const view = (p: (typeof asked)[number]) => ({
    id: p.id,
    status: p.status,
    question: safeRedactText(p.question),
    effect: safeRedactText(renderEffect(pendingEffect({ proposal: p.proposal as never }, 'ja'))),
    confirmationType: p.confirmationType,
    confirmationsGiven: p.confirmationsGiven,
    reasonCode: p.reasonCode,
    createdAt: p.createdAt,
    expiresAt: p.expiresAt,
    decidedAt: p.decidedAt,
    executedAt: p.executedAt,
    turnId: p.turnId,
  });
  // The turns that answered this turn's question (by button or text).
  const answers = await Promise.all(
    asked
      .filter((p) => p.decidedAt)
      .map((p) =>
        db.turnRecord.findFirst({
          where: {
            platform: p.platform,
            roomId: p.roomId,
            accountId: p.accountId,
            kind: 'user_request',
            createdAt: { gte: p.decidedAt! },
            id: { not: id },
          },
          orderBy: { createdAt: 'asc' },
          select: { id: true, createdAt: true, decision: true, reasonCode: true },
        }),
      ),
  );
  const notes = (turn.contextSummary as { notes?: Record<string, unknown> } | null)?.notes ?? {};
  const proposals = await Promise.all(
    ((turn.proposals as Record<string, unknown>[] | null) ?? []).map(async (p) => ({
      ...p,
      words:
        typeof p.tool === 'string'
          ? safeRedactText(await proposalInWords(db, turn, p.tool, p.parameters ?? {}, timezone, now, serverName))
          : null,
    })),
  );
  return {
    ...turn,
    workItemId: turn.workItemId?.toString() ?? null,
    costUsd: Number(turn.costUsd),
    member: turn.memberId ? (names.get(turn.memberId) ?? turn.memberId) : null,
    room: rooms.get(turn.roomId) ?? turn.roomId,
    inputRedacted: answerInWords(turn.inputRedacted, turn.reasonCode),
    proposals,
    calls: calls.map((c) => ({
      ...c,
      id: c.id.toString(),
      costUsd: Number(c.costUsd),
      purposeLabel: purposeLabel(c.purpose),
    })),
    pending: asked.map(view),
    answers: answers.filter((a) => a !== null),
    answered: await Promise.all(
      decidedHere
        .filter((p) => !asked.some((q) => q.id === p.id))
        .map(async (p) => ({
          ...view(p),
          turnId:
            p.turnId ??
            (
              await db.turnRecord.findFirst({
                where: { execution: { path: ['pendingActionId'], equals: p.id } },
                select: { id: true },
              })
            )?.id ??
            null,
        })),
    ),
    claimCheck: notes.claimCheck ?? null,
  };
}

/** A member's or a room's page: recent turns, waiting confirmations, schedules, cost of 30 days. */
export async function scopeView(
  db: Db,
  sql: Sql,
  scope: { memberId: string } | { roomId: string },
  now: Date,
  timezone: string,
): Promise<Record<string, unknown> | null> {
  const where = 'memberId' in scope ? { memberId: scope.memberId } : { roomId: scope.roomId };
  let title: string;
  if ('memberId' in scope) {
    const m = await db.member.findFirst({ where: { id: scope.memberId } });
    if (!m) return null;
    title = `${m.name}さん`;
  } else {
    const names = await roomLabels(db, [scope.roomId]);
    const any = await db.turnRecord.findFirst({ where: { roomId: scope.roomId }, select: { id: true } });
    if (!names.has(scope.roomId) && !any) return null;
    title = `ルーム「${names.get(scope.roomId) ?? scope.roomId}」`;
  }
  const since = new Date(startOfDay(now, timezone).getTime() - 29 * DAY);
  const [turns, pending, schedules, cost] = await Promise.all([
    auditLog(
      db,
      { ...('memberId' in scope ? { person: scope.memberId } : { room: scope.roomId }), limit: 30 },
      timezone,
    ),
    pendingConfirmations(db, now, where),
    db.schedule.findMany({
      where: 'roomId' in scope ? { roomId: scope.roomId } : { roomId: { in: await roomsOf(db, scope.memberId) } },
      orderBy: { id: 'asc' },
    }),
    sql<{ usd: number; turns: number }>(
      `SELECT coalesce(sum(u."costUsd"), 0)::float AS usd, count(DISTINCT t.id)::int AS turns
       FROM turn_records t LEFT JOIN llm_usage u ON u."turnId" = t.id
       WHERE t."createdAt" >= $1::timestamptz AT TIME ZONE 'UTC'
         AND ${'memberId' in scope ? 't."memberId"' : 't."roomId"'} = $2`,
      [since.toISOString(), 'memberId' in scope ? scope.memberId : scope.roomId],
    ),
  ]);
  return {
    title,
    turns,
    pending,
    schedules: schedules.map((s) => ({ id: s.id, kind: s.kind, cron: s.cron, enabled: s.enabled })),
    cost30d: cost[0] ?? { usd: 0, turns: 0 },
  };
}

async function roomsOf(db: Db, memberId: string): Promise<string[]> {
  const rows = await db.turnRecord.findMany({ where: { memberId }, distinct: ['roomId'], select: { roomId: true } });
  return rows.map((r) => r.roomId);
}

/** Confirmations waiting for an answer (question redacted: pending actions keep raw text). */
export async function pendingConfirmations(
  db: Db,
  now: Date,
  scope: { memberId?: string; roomId?: string } = {},
): Promise<unknown[]> {
  const rows = await db.pendingAction.findMany({
    where: { ...scope, status: { in: ['pending', 'approved'] }, expiresAt: { gt: now } },
    orderBy: { createdAt: 'desc' },
    take: 200,
  });
  const names = await memberNames(
    db,
    rows.map((r) => r.memberId),
  );
  return rows.map((r) => ({
    id: r.id,
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    status: r.status,
    platform: r.platform,
    roomId: r.roomId,
    member: r.memberId ? (names.get(r.memberId) ?? r.memberId) : null,
    tool: (r.proposal as { toolName?: string }).toolName ?? null,
    question: safeRedactText(r.question),
    effect: safeRedactText(renderEffect(pendingEffect({ proposal: r.proposal as never }, 'ja'))),
    room: r.roomId,
    confirmationType: r.confirmationType,
    confirmationsGiven: r.confirmationsGiven,
    reasonCode: r.reasonCode,
    confidence: r.confidence,
    turnId: r.turnId,
  }));
}

/** Last runs of every schedule (period rows), for the schedules page. */
export async function lastRuns(
  db: Db,
): Promise<
  Map<string, { period: Date | null; status: string; recipients: number; skipped: number; firedBy: string | null }>
> {
  const rows = await db.scheduleRun.findMany({
    where: { period: { not: null } },
    orderBy: { period: 'desc' },
    distinct: ['scheduleId'],
  });
  return new Map(
    rows.map((r) => [
      r.scheduleId,
      { period: r.period, status: r.status, recipients: r.recipients, skipped: r.skipped, firedBy: r.firedBy },
    ]),
  );
}

/**
 * Constitution audits (seed 003 §4.8.1–4.8.2): turns whose reasoning is short (< 50 characters), claims
 * permissions, or asserts execution (in its reasoning, or a reply claiming an action the turn did not run,
 * corrected before it was sent: `notes.claimCheck`); a tool executed without a Guardian verdict or without an
 * AuthorizationGate result (a layer skipped); and blocked constitution violations. An answer to a
 * confirmation (a button or 「はい」) is not judged on its reasoning: the model did not decide it.
 */
export async function constitutionAudits(
  sql: Sql,
  days: number,
): Promise<{ checks: Record<string, number>; turns: unknown[] }> {
  const since = new Date(Date.now() - days * DAY).toISOString();
  const rows = await sql<Record<string, unknown>>(
    `WITH t AS (
       SELECT id, "createdAt", decision, "reasonCode", "guardianAction", "authResult", proposals, "memberId", "roomId",
              "finalDecider" = 'USER' OR "reasonCode" LIKE 'S\\_%' AS answer,
              coalesce(reasoning::text, '') AS r, length(coalesce(reasoning->>'intent_understanding', '')) AS r_len,
              "contextSummary"->'notes' ? 'claimCheck' AS claimed
       FROM turn_records
       WHERE "createdAt" >= $1::timestamptz AT TIME ZONE 'UTC' AND kind = 'user_request' AND model IS NOT NULL),
     runs AS (SELECT t.id, bool_or(coalesce(p->'guardian'->>'action', '') = '') AS no_guardian,
                     bool_or(coalesce(p->'auth'->>'result', '') <> 'ALLOWED') AS no_auth
              FROM t, jsonb_array_elements(t.proposals) p WHERE p->'execution'->>'status' = 'ok' GROUP BY t.id),
     flagged AS (
       SELECT id, "createdAt", decision, "reasonCode", "memberId", "roomId", array_remove(ARRAY[
         CASE WHEN r_len < 50 AND NOT answer THEN 'short_reasoning' END,
         CASE WHEN r ~ '(権限がある|アクセスできる|見せてよい|許可されている)' THEN 'permission_claim' END,
         CASE WHEN r ~ '(実行します|実行する)' OR claimed THEN 'asserts_execution' END,
         CASE WHEN "reasonCode" LIKE 'G_CONSTITUTION%'
           OR proposals::text LIKE '%G_CONSTITUTION%' THEN 'violation_blocked' END,
         CASE WHEN runs.no_guardian THEN 'guardian_skipped' END,
         CASE WHEN runs.no_auth THEN 'auth_skipped' END
       ], NULL) AS findings FROM t LEFT JOIN runs USING (id))
     SELECT id, "createdAt", decision, "reasonCode", "memberId", "roomId", findings
     FROM flagged WHERE cardinality(findings) > 0
     ORDER BY "createdAt" DESC LIMIT 100`,
    [since],
  );
  const checks: Record<string, number> = {
    short_reasoning: 0,
    permission_claim: 0,
    asserts_execution: 0,
    violation_blocked: 0,
    guardian_skipped: 0,
    auth_skipped: 0,
  };
  for (const r of rows) for (const f of r.findings as string[]) checks[f] = (checks[f] ?? 0) + 1;
  return { checks, turns: rows.map((r) => safeRedactValue(r)) };
}

/**
 * What a person answered to a confirmation, in words: a button sends 「1」 (approve) or 「2」 (cancel) as the
 * message (so does typing the number), which alone reads as nothing.
 */
export function answerInWords(input: string | null, reasonCode: string): string | null {
  if (!/^S_(USER_APPROVED|USER_DENIED|SECOND_CONFIRMATION)$/.test(reasonCode) && reasonCode !== 'T_TOOL_FAILED')
    return input;
  if (input?.trim() === '1') return '「承認」を選択（ボタンまたは「1」）';
  if (input?.trim() === '2') return '「キャンセル」を選択（ボタンまたは「2」）';
  return input;
}

/** Room names from the directory (a console room or one not in the directory keeps its id). */
export async function roomLabels(db: Db, ids: string[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return new Map();
  const rows = await db.room.findMany({
    where: { externalId: { in: wanted } },
    select: { externalId: true, name: true },
  });
  return new Map(rows.filter((r) => r.name).map((r) => [r.externalId, r.name]));
}

async function memberNames(db: Db, ids: (string | null)[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((x): x is string => !!x))];
  if (wanted.length === 0) return new Map();
  const rows = await db.member.findMany({ where: { id: { in: wanted } }, select: { id: true, name: true } });
  return new Map(rows.map((m) => [m.id, m.name]));
}

function clip(s: string | null, n: number): string | null {
  return s === null ? null : s.length > n ? `${s.slice(0, n)}…` : s;
}
