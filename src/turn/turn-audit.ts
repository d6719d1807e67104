import type { TurnDecision } from './turn-decision';
import { DECISION_LABELS } from './turn-decision';
import type { TurnRecordInput } from './turn-recorder';

/** The turn's facts that are not part of its decision: where it happened, for whom, and how long it took. */
export interface TurnFacts {
  id: string;
  orgId: string | null;
  platform: string;
  roomId: string;
  accountId: string;
  memberId: string | null;
  workItemId: bigint | null;
  /** The person's message as received (redacted when the row is prepared). */
  input: string;
  /** What was said (the reply as delivered). */
  finalReply: string;
  totalMs: number;
  /** Shadow mode: the decision is recorded as `SHADOW_<decision>` (nothing was sent or executed). */
  shadow: boolean;
}

/**
 * The audit row of a user turn (R-O1), built once from its decision: what the brain answered, the
 * Guardian's and the Gate's own outcomes, what ran, and why the turn ended as it did. Redaction happens
 * when the row is prepared (turn-recorder.ts).
 */
export function turnAudit(d: TurnDecision, t: TurnFacts): TurnRecordInput {
  const { shadow, ...facts } = t;
  const label = DECISION_LABELS[d.kind];
  return {
    ...facts,
    decision: shadow ? `SHADOW_${label}` : label,
    reasonCode: d.reasonCode,
    finalDecider: d.decider,
    model: d.brain?.model ?? null,
    outputType: d.brain?.outputType ?? null,
    reasoning: d.brain?.reasoning,
    confidence: d.brain?.confidence,
    contextSummary: d.context ? { ...d.context } : undefined,
    proposals: d.proposals,
    toolsMs: (d.proposals ?? []).reduce((ms, p) => ms + ('execution' in p ? (p.execution?.ms ?? 0) : 0), 0),
    guardianAction: d.guardian?.action ?? null,
    guardianReason: d.guardian?.reasonCode ?? null,
    authResult: d.auth?.result ?? null,
    authReason: d.auth?.reasonCode ?? null,
    execution: d.execution,
    errorId: d.error?.errorId ?? null,
    errorCategory: d.error?.category ?? null,
    calls: d.calls,
    notes: d.notes,
  };
}
