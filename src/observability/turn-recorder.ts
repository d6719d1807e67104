import { randomUUID } from 'node:crypto';
import type { LlmCallRecord } from '../core/llm-usage';
import { Prisma, type Db } from '../db/prisma';
import type { Metrics } from './metrics';
import { REDACTION_FAILED, safeRedactText, safeRedactValue } from './redact';

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
  turnId: string; orgId: string | null; model: string; purpose: string; inputTokens: number; outputTokens: number;
  cacheWriteTokens: number; cacheReadTokens: number; costUsd: string; durationMs: number; requestId: string | null;
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
 * Writes turn records and LLM usage rows in one transaction. Every text and JSON value passes
 * fail-closed PII redaction first (R-O2): if redaction fails, a placeholder is stored, never raw text.
 */
export class TurnRecorder {
  constructor(private readonly db: Db, private readonly metrics?: Metrics) {}

  /**
   * Redacts and shapes a turn into its rows (plain values; JSON columns as JSON text). Used by
   * {@link record} and by the pipeline, which writes these rows together with the turn's other writes.
   */
  prepare(t: TurnRecordInput): PreparedTurn {
    const id = t.id ?? randomUUID();
    const calls = t.calls ?? [];
    const sum = (f: (c: LlmCallRecord) => number) => calls.reduce((a, c) => a + f(c), 0);
    const js = (v: unknown): string | null => (v === undefined || v === null ? null : JSON.stringify(safeRedactValue(v)));
    const row: Record<string, unknown> = {
      id, orgId: t.orgId, platform: t.platform, roomId: t.roomId, accountId: t.accountId, memberId: t.memberId,
      workItemId: t.workItemId != null ? t.workItemId.toString() : null, kind: t.kind ?? 'user_request',
      inputRedacted: safeRedactText(t.input),
      contextSummary: js({ ...(t.contextSummary ?? {}), ...(t.notes ? { notes: t.notes } : {}) }) ?? '{}',
      model: t.model ?? null, outputType: t.outputType ?? null, reasoning: js(t.reasoning), confidence: js(t.confidence),
      proposals: js(t.proposals ?? []) ?? '[]', guardianAction: t.guardianAction ?? null, guardianReason: t.guardianReason ?? null,
      authResult: t.authResult ?? null, authReason: t.authReason ?? null, execution: js(t.execution),
      finalReply: safeRedactText(t.finalReply), decision: t.decision, reasonCode: t.reasonCode, finalDecider: t.finalDecider,
      sealed: t.sealed ?? true, overrideable: t.overrideable ?? false, errorId: t.errorId ?? null, errorCategory: t.errorCategory ?? null,
      totalMs: Math.round(t.totalMs), llmMs: Math.round(t.llmMs ?? sum((c) => c.durationMs)), toolsMs: Math.round(t.toolsMs ?? 0),
      inputTokens: sum((c) => c.usage.inputTokens), outputTokens: sum((c) => c.usage.outputTokens),
      cacheWriteTokens: sum((c) => c.usage.cacheWriteTokens), cacheReadTokens: sum((c) => c.usage.cacheReadTokens),
      costUsd: sum((c) => c.costUsd).toFixed(6), selfCritique: js(t.selfCritique),
    };
    const usage = calls.map((c) => ({
      turnId: id, orgId: t.orgId, model: c.model, purpose: c.purpose,
      inputTokens: c.usage.inputTokens, outputTokens: c.usage.outputTokens, cacheWriteTokens: c.usage.cacheWriteTokens, cacheReadTokens: c.usage.cacheReadTokens,
      costUsd: c.costUsd.toFixed(6), durationMs: c.durationMs, requestId: c.requestId ?? null,
    }));
    return { id, row, usage, observe: () => this.observe(t, calls) };
  }

  /** Writes one turn record and its LLM usage rows (the two inserts go out side by side). */
  async record(t: TurnRecordInput): Promise<string> {
    const p = this.prepare(t);
    const r = p.row;
    const j = (v: unknown) => (v === null ? Prisma.JsonNull : (JSON.parse(String(v)) as Prisma.InputJsonValue));
    const data: Prisma.TurnRecordCreateInput = {
      ...(r as unknown as Prisma.TurnRecordCreateInput),
      workItemId: r.workItemId === null ? null : BigInt(String(r.workItemId)),
      contextSummary: j(r.contextSummary) as Prisma.InputJsonValue, reasoning: j(r.reasoning), confidence: j(r.confidence),
      proposals: j(r.proposals) as Prisma.InputJsonValue, execution: j(r.execution), selfCritique: j(r.selfCritique),
      costUsd: new Prisma.Decimal(String(r.costUsd)),
    };
    await Promise.all([
      this.db.turnRecord.create({ data, select: { id: true } }),
      p.usage.length > 0 ? this.db.llmUsage.createMany({ data: p.usage.map((u) => ({ ...(u as unknown as Prisma.LlmUsageCreateManyInput), costUsd: new Prisma.Decimal(String(u.costUsd)) })) }) : Promise.resolve(),
    ]);
    p.observe();
    return p.id;
  }

  private observe(t: TurnRecordInput, calls: LlmCallRecord[]): void {
    const m = this.metrics;
    if (!m) return;
    m.turns.inc({ kind: t.kind ?? 'user_request', decision: t.decision });
    if (t.guardianAction) m.guardian.inc({ action: t.guardianAction, reason_code: t.guardianReason ?? 'none' });
    if (t.authResult === 'DENIED') m.authDenials.inc({ reason_code: t.authReason ?? 'none' });
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

export { REDACTION_FAILED };
