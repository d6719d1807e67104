/** Mapping between stored rows and the plain views of `./types` (internal to src/state). */
import { pgText } from '../db/sql';
import type { PendingAction } from '../generated/prisma/client';
import { safeRedactText, safeRedactValue } from '../observability/redact';
import type { SessionKey } from './session-key';
import type { CreatePendingInput, PendingActionView, PendingStatus, StoredProposal } from './types';

/** A pending_actions row as Prisma (or `RETURNING *`) gives it. */
export type PendingRow = PendingAction;

/** The row as a plain view. */
export function toPendingView(row: PendingRow): PendingActionView {
  return {
    id: row.id,
    orgId: row.orgId,
    key: { platform: row.platform, roomId: row.roomId, accountId: row.accountId },
    memberId: row.memberId,
    turnId: row.turnId,
    status: row.status as PendingStatus,
    proposal: row.proposal as unknown as StoredProposal,
    question: row.question,
    confirmationType: row.confirmationType === 'double' ? 'double' : 'single',
    confirmationsGiven: row.confirmationsGiven,
    questionKey: row.questionKey ?? null,
    originalMessage: row.originalMessage,
    reasoning: row.reasoning,
    confidence: Number(row.confidence),
    reasonCode: row.reasonCode,
    expiresAt: row.expiresAt,
    decidedAt: row.decidedAt,
    executedAt: row.executedAt,
    result: row.result,
    createdAt: row.createdAt,
    traceContext: row.traceContext ?? null,
  };
}

/** The timestamp columns of pending_actions (JSON gives them as UTC text without a zone). */
const PENDING_TIMES = ['expiresAt', 'decidedAt', 'executedAt', 'redactedAt', 'createdAt'] as const;

/** A pending_actions row read as JSON (`row_to_json`), with its timestamps as Dates again. */
export function pendingRowFromJson(json: Record<string, unknown>): PendingRow {
  const row: Record<string, unknown> = { ...json };
  for (const k of PENDING_TIMES) {
    const v = json[k];
    row[k] = typeof v === 'string' ? new Date(/(?:[zZ]|[+-]\d\d:?\d\d)$/.test(v) ? v : `${v}Z`) : null;
  }
  return row as unknown as PendingRow;
}

/** True when the row belongs to exactly this session (platform, room and account). */
export function isOwner(row: { platform: string; roomId: string; accountId: string }, key: SessionKey): boolean {
  return row.platform === key.platform && row.roomId === key.roomId && row.accountId === key.accountId;
}

/** A value as JSON text for a `::jsonb` parameter (undefined → null; unserialisable → its string form). */
export function jsonText(value: unknown): string {
  const strip = (_k: string, v: unknown) => (typeof v === 'string' ? pgText(v) : v);
  try {
    return JSON.stringify(value ?? null, strip) ?? 'null';
  } catch {
    return JSON.stringify(pgText(String(value)));
  }
}

/**
 * The PII-redacted copies of a new pending action's texts. The raw values are needed until the action
 * is decided; then a database trigger replaces them with these (see prisma/schema.prisma, redactedCopy).
 */
export function redactedCopy(
  input: Pick<CreatePendingInput, 'proposal' | 'originalMessage' | 'question' | 'reasoning'>,
): Record<string, unknown> {
  return {
    proposal: safeRedactValue(input.proposal),
    originalMessage: safeRedactText(input.originalMessage),
    question: safeRedactText(input.question),
    reasoning: safeRedactText(input.reasoning),
  };
}
