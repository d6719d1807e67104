import { randomUUID } from 'node:crypto';
import type { LlmCallRecord } from '../core/llm-usage';
import type { Db } from '../db/prisma';
import { SqlParams, sqlRunner, type Sql } from '../db/sql';
import { completeCte, type ClaimedItem } from '../queue/work-queue';
import type { Metrics } from '../observability/metrics';
import { Redactor, safeRedactValue } from '../observability/redact';

/** Who made the final decision of a turn (seed 001). */
export type FinalDecider = 'SYSTEM' | 'USER' | 'LLM';

/** Everything one turn leaves in the audit trail (R-O1). Raw values: redaction happens here. */
export interface TurnRecordInput {
  id?: string;
  orgId: string | null;
  platform: string;
  roomId: string;
  accountId: string;
  memberId: string | null;
  workItemId?: bigint | null;
  kind?: string;
  input: string | null;
  contextSummary?: Record<string, unknown>;
  model?: string | null;
  outputType?: string | null;
  reasoning?: unknown;
  confidence?: unknown;
  proposals?: unknown[];
  guardianAction?: string | null;
  guardianReason?: string | null;
  authResult?: string | null;
  authReason?: string | null;
  execution?: unknown;
  finalReply: string | null;
  decision: string;
  reasonCode: string;
  finalDecider: FinalDecider;
  sealed?: boolean;
  overrideable?: boolean;
  errorId?: string | null;
  errorCategory?: string | null;
  totalMs: number;
  llmMs?: number;
  toolsMs?: number;
  calls?: LlmCallRecord[];
  selfCritique?: unknown;
  /** Extra redacted facts (retries, degraded sources, constitution flags). */
  notes?: Record<string, unknown>;
}

/** One llm_usage row. */
export interface UsageRow {
  /** Null for calls outside a turn (conversation summaries). */
  turnId: string | null;
  orgId: string | null;
  model: string;
  purpose: string;
  inputTokens: number;
  outputTokens: number;
  cacheWriteTokens: number;
  cacheReadTokens: number;
  costUsd: string;
  durationMs: number;
  requestId: string | null;
}

/** A turn's rows, redacted and ready to insert. */
export interface PreparedTurn {
  id: string;
  /** turn_records columns → values (JSON columns as JSON text, bigint and decimal as text). */
  row: Record<string, unknown>;
  usage: UsageRow[];
  /** Updates the metrics once the rows are written. */
  observe: () => void;
}

/**
 * The single writer of `turn_records` and `llm_usage`: a turn's rows are written in one statement, on
 * their own ({@link record}) or inside the turn's last statement ({@link turnCtes}). Every text and JSON value passes
 * fail-closed PII redaction first (R-O2): if redaction fails, a placeholder is stored, never raw text.
 */
export class TurnRecorder {
  private readonly sql: Sql;

  constructor(
    db: Db,
    private readonly metrics?: Metrics,
    sql?: Sql,
  ) {
    this.sql = sql ?? sqlRunner(db);
  }

  /**
   * Redacts and shapes a turn into its rows (plain values; JSON columns as JSON text). Used by
   * {@link record} and by the pipeline, which writes these rows together with the turn's other writes.
   */
  prepare(t: TurnRecordInput): PreparedTurn {
    const id = t.id ?? randomUUID();
    const calls = t.calls ?? [];
    const sum = (f: (c: LlmCallRecord) => number) => calls.reduce((a, c) => a + f(c), 0);
    // One redactor for the whole row: a value its columns repeat (parameters, results) is scanned once.
    const redactor = new Redactor();
    const js = (v: unknown): string | null =>
      v === undefined || v === null ? null : JSON.stringify(redactor.safeValue(v));
    const row: Record<string, unknown> = {
      id,
      orgId: t.orgId,
      platform: t.platform,
      roomId: t.roomId,
      accountId: t.accountId,
      memberId: t.memberId,
      workItemId: t.workItemId != null ? t.workItemId.toString() : null,
      kind: t.kind ?? 'user_request',
      inputRedacted: redactor.safeText(t.input),
      contextSummary: js({ ...(t.contextSummary ?? {}), ...(t.notes ? { notes: t.notes } : {}) }) ?? '{}',
      model: t.model ?? null,
      outputType: t.outputType ?? null,
      reasoning: js(t.reasoning),
      confidence: js(t.confidence),
      proposals: js(t.proposals ?? []) ?? '[]',
      guardianAction: t.guardianAction ?? null,
      guardianReason: t.guardianReason ?? null,
      authResult: t.authResult ?? null,
      authReason: t.authReason ?? null,
      execution: js(t.execution),
      finalReply: redactor.safeText(t.finalReply),
      decision: t.decision,
      reasonCode: t.reasonCode,
      finalDecider: t.finalDecider,
      sealed: t.sealed ?? true,
      overrideable: t.overrideable ?? false,
      errorId: t.errorId ?? null,
      errorCategory: t.errorCategory ?? null,
      totalMs: Math.round(t.totalMs),
      llmMs: Math.round(t.llmMs ?? sum((c) => c.durationMs)),
      toolsMs: Math.round(t.toolsMs ?? 0),
      inputTokens: sum((c) => c.usage.inputTokens),
      outputTokens: sum((c) => c.usage.outputTokens),
      cacheWriteTokens: sum((c) => c.usage.cacheWriteTokens),
      cacheReadTokens: sum((c) => c.usage.cacheReadTokens),
      costUsd: sum((c) => c.costUsd).toFixed(6),
      selfCritique: js(t.selfCritique),
    };
    const usage = usageRows({ id, orgId: t.orgId }, calls);
    return { id, row, usage, observe: () => this.observe(t, calls) };
  }

  /** Writes one turn record and its LLM usage rows in one statement. */
  async record(t: TurnRecordInput): Promise<string> {
    const prepared = this.prepare(t);
    const p = new SqlParams();
    await this.sql(`WITH ${turnCtes(p, prepared).join(',\n')} SELECT 1`, p.values);
    prepared.observe();
    return prepared.id;
  }

  /**
   * Stores a self-critique verdict with its turn (once: a turn already reviewed keeps its verdict) and the
   * review call's usage row, in one statement (R-B6). The verdict is redacted like every recorded value.
   */
  async recordCritique(
    turn: { id: string; orgId: string | null },
    critique: unknown,
    call?: LlmCallRecord,
    item?: Pick<ClaimedItem, 'id' | 'claimToken'>,
  ): Promise<void> {
    const p = new SqlParams();
    const ctes = [
      `c AS (UPDATE turn_records SET "selfCritique" = ${p.add(JSON.stringify(safeRedactValue(critique)))}::jsonb
      WHERE id = ${p.add(turn.id)} AND "selfCritique" IS NULL RETURNING 1)`,
    ];
    if (call) ctes.push(usageCte(p, usageRows(turn, [call])));
    // The critique's own work item completes in the same statement (no round trip of its own).
    if (item) ctes.push(completeCte(p, 'w', item));
    await this.sql(`WITH ${ctes.join(',\n')} SELECT 1`, p.values);
  }

  /** Usage rows of LLM calls made outside a turn whose result is not stored (an unusable summary). */
  async recordUsage(orgId: string | null, calls: readonly LlmCallRecord[]): Promise<void> {
    if (calls.length === 0) return;
    const p = new SqlParams();
    await this.sql(`WITH ${llmUsageCte(p, orgId, calls)} SELECT 1`, p.values);
  }

  private observe(t: TurnRecordInput, calls: LlmCallRecord[]): void {
    const m = this.metrics;
    if (!m) return;
    m.turns.inc({ kind: t.kind ?? 'user_request', decision: t.decision });
    if (t.guardianAction) m.guardian.inc({ action: t.guardianAction, reason_code: t.guardianReason ?? 'none' });
    if (t.authResult === 'DENIED') m.authDenials.inc({ reason_code: t.authReason ?? 'none' });
    for (const p of (t.proposals ?? []) as { tool?: string; execution?: { status?: string } }[]) {
      if (p?.execution?.status) m.toolExecutions.inc({ tool: p.tool ?? 'unknown', status: p.execution.status });
    }
    for (const c of calls) {
      m.llmLatency.observe({ model: c.model }, c.durationMs / 1000);
      m.tokens.inc({ model: c.model, kind: 'input' }, c.usage.inputTokens);
      m.tokens.inc({ model: c.model, kind: 'output' }, c.usage.outputTokens);
      m.tokens.inc({ model: c.model, kind: 'cache_write' }, c.usage.cacheWriteTokens);
      m.tokens.inc({ model: c.model, kind: 'cache_read' }, c.usage.cacheReadTokens);
      m.costUsd.inc({ model: c.model }, c.costUsd);
    }
  }
}

const TURN_JSON = new Set(['contextSummary', 'reasoning', 'confidence', 'proposals', 'execution', 'selfCritique']);
const USAGE_COLUMNS =
  '"turnId", "orgId", model, purpose, "inputTokens", "outputTokens", "cacheWriteTokens", ' +
  '"cacheReadTokens", "costUsd", "durationMs", "requestId"';
const USAGE_TYPES =
  '"turnId" text, "orgId" text, model text, purpose text, "inputTokens" int, "outputTokens" int, ' +
  '"cacheWriteTokens" int, "cacheReadTokens" int, "costUsd" numeric, "durationMs" int, "requestId" text';

/** CTEs `t` (the turn record) and `u` (its LLM usage rows, when there are any) for a prepared turn. */
export function turnCtes(p: SqlParams, turn: PreparedTurn): string[] {
  const cols = Object.keys(turn.row);
  const cast = (c: string) =>
    TURN_JSON.has(c) ? '::jsonb' : c === 'workItemId' ? '::bigint' : c === 'costUsd' ? '::numeric' : '';
  const ctes = [
    `t AS (INSERT INTO turn_records (${cols.map((c) => `"${c}"`).join(', ')})
    VALUES (${cols.map((c) => `${p.add(turn.row[c])}${cast(c)}`).join(', ')}) RETURNING 1)`,
  ];
  if (turn.usage.length > 0) ctes.push(usageCte(p, turn.usage));
  return ctes;
}

/** CTE `u`: inserts LLM usage rows. */
function usageCte(p: SqlParams, usage: readonly UsageRow[]): string {
  return `u AS (INSERT INTO llm_usage (${USAGE_COLUMNS}) SELECT ${USAGE_COLUMNS}
    FROM jsonb_to_recordset(${p.add(JSON.stringify(usage))}::jsonb) AS x(${USAGE_TYPES}) RETURNING 1)`;
}

/**
 * CTE `u`: the usage rows of LLM calls made outside a turn (conversation summaries), for a statement of
 * another table's owner that stores the call's result (this module stays the only writer of `llm_usage`).
 */
export function llmUsageCte(p: SqlParams, orgId: string | null, calls: readonly LlmCallRecord[]): string {
  return usageCte(p, usageRows({ id: null, orgId }, calls));
}

/** The llm_usage rows of a turn's calls. */
function usageRows(turn: { id: string | null; orgId: string | null }, calls: readonly LlmCallRecord[]): UsageRow[] {
  return calls.map((c) => ({
    turnId: turn.id,
    orgId: turn.orgId,
    model: c.model,
    purpose: c.purpose,
    inputTokens: c.usage.inputTokens,
    outputTokens: c.usage.outputTokens,
    cacheWriteTokens: c.usage.cacheWriteTokens,
    cacheReadTokens: c.usage.cacheReadTokens,
    costUsd: c.costUsd.toFixed(6),
    durationMs: c.durationMs,
    requestId: c.requestId ?? null,
  }));
}

/** Deletes turn records and LLM usage rows older than `before` (retention). */
export async function purgeTurns(db: Db, before: Date): Promise<{ turnRecords: number; llmUsage: number }> {
  const [turns, usage] = await Promise.all([
    db.turnRecord.deleteMany({ where: { createdAt: { lt: before } } }),
    db.llmUsage.deleteMany({ where: { createdAt: { lt: before } } }),
  ]);
  return { turnRecords: turns.count, llmUsage: usage.count };
}
