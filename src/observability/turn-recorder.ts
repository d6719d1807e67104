import { randomUUID } from 'node:crypto';
import type { LlmCallRecord } from '../brain/brain';
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

const json = (v: unknown): Prisma.InputJsonValue | typeof Prisma.JsonNull =>
  v === undefined || v === null ? Prisma.JsonNull : (safeRedactValue(v) as Prisma.InputJsonValue);

/**
 * Writes turn records and LLM usage rows in one transaction. Every text and JSON value passes
 * fail-closed PII redaction first (R-O2): if redaction fails, a placeholder is stored, never raw text.
 */
export class TurnRecorder {
  constructor(private readonly db: Db, private readonly metrics?: Metrics) {}

  async record(t: TurnRecordInput): Promise<string> {
    const id = t.id ?? randomUUID();
    const calls = t.calls ?? [];
    const sum = (f: (c: LlmCallRecord) => number) => calls.reduce((a, c) => a + f(c), 0);
    const data: Prisma.TurnRecordCreateInput = {
      id,
      orgId: t.orgId,
      platform: t.platform,
      roomId: t.roomId,
      accountId: t.accountId,
      memberId: t.memberId,
      workItemId: t.workItemId ?? null,
      kind: t.kind ?? 'user_request',
      inputRedacted: safeRedactText(t.input),
      contextSummary: json({ ...(t.contextSummary ?? {}), ...(t.notes ? { notes: t.notes } : {}) }) as Prisma.InputJsonValue,
      model: t.model ?? null,
      outputType: t.outputType ?? null,
      reasoning: json(t.reasoning),
      confidence: json(t.confidence),
      proposals: json(t.proposals ?? []) as Prisma.InputJsonValue,
      guardianAction: t.guardianAction ?? null,
      guardianReason: t.guardianReason ?? null,
      authResult: t.authResult ?? null,
      authReason: t.authReason ?? null,
      execution: json(t.execution),
      finalReply: safeRedactText(t.finalReply),
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
      costUsd: new Prisma.Decimal(sum((c) => c.costUsd).toFixed(6)),
      selfCritique: json(t.selfCritique),
    };
    const usage = calls.map((c) => ({
      turnId: id, orgId: t.orgId, model: c.model, purpose: c.purpose,
      inputTokens: c.usage.inputTokens, outputTokens: c.usage.outputTokens,
      cacheWriteTokens: c.usage.cacheWriteTokens, cacheReadTokens: c.usage.cacheReadTokens,
      costUsd: new Prisma.Decimal(c.costUsd.toFixed(6)), durationMs: c.durationMs, requestId: c.requestId ?? null,
    }));
    // Independent rows: written side by side (one round trip of latency) rather than in a transaction.
    await Promise.all([
      this.db.turnRecord.create({ data, select: { id: true } }),
      usage.length > 0 ? this.db.llmUsage.createMany({ data: usage }) : Promise.resolve(),
    ]);
    this.observe(t, calls);
    return id;
  }

  private observe(t: TurnRecordInput, calls: LlmCallRecord[]): void {
    const m = this.metrics;
    if (!m) return;
    m.turns.inc({ kind: t.kind ?? 'user_request', decision: t.decision });
    if (t.guardianAction) m.guardian.inc({ action: t.guardianAction, reason_code: t.guardianReason ?? 'none' });
    if (t.authResult === 'DENIED') m.authDenials.inc({ reason_code: t.authReason ?? 'none' });
    if (t.reasonCode.startsWith('G_CONSTITUTION')) m.constitutionViolations.inc({ reason_code: t.reasonCode });
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
