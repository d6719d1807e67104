import type { Reviewer } from '../brain/critique';
import type { Db } from '../db/prisma';
import { sqlRunner, type Sql } from '../db/sql';
import type { ClaimedItem, EnqueueInput, WorkOutcome } from '../queue/work-queue';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { TurnRecorder } from './turn-recorder';

/** Why a turn was picked for self-critique (R-B6, seed 003 §5.5.3). */
export type CritiqueReason = 'mid_confidence' | 'dangerous_tool' | 'several_tools' | 'random';

/** What the sampling looks at: the brain's confidence and the risks of the tools it proposed. */
export interface CritiqueCandidate {
  confidence: number | null;
  proposedRisks: readonly string[];
}

/**
 * Seed 003's "high" confidence band (0.7–0.89), the middle of its table: 0.9–1.0 is "very high" and runs as is,
 * below 0.7 the Guardian asks first. A turn here is critiqued every time; a very confident one only by chance.
 */
const MID_CONFIDENCE = { min: 0.7, below: 0.9 };

/**
 * Pure sampling rule: confidence in the mid band (0.7 ≤ c < 0.9), a dangerous tool (risk high or critical),
 * several tools proposed, or else a random share `rate` (SELF_CRITIQUE_RATE). A rate of 0 turns self-critique off.
 */
export function critiqueReason(
  c: CritiqueCandidate,
  rate: number,
  random: () => number = Math.random,
): CritiqueReason | null {
  if (rate <= 0) return null;
  const conf = c.confidence;
  if (conf !== null && conf >= MID_CONFIDENCE.min && conf < MID_CONFIDENCE.below) return 'mid_confidence';
  if (c.proposedRisks.some((r) => r === 'high' || r === 'critical')) return 'dangerous_tool';
  if (c.proposedRisks.length > 1) return 'several_tools';
  return random() < rate ? 'random' : null;
}

export interface SelfCriticOptions {
  /** Reads the turn under review. */
  db: Db;
  /** The hot-path runner (the `pg` pool) for that read; through `db` without it. */
  sql?: Sql;
  /** The model call (brain/critique.ts). */
  reviewer: Pick<Reviewer, 'review'>;
  /** Stores the verdict with the turn, and the call's usage (the writer of turn_records and llm_usage). */
  recorder: Pick<TurnRecorder, 'recordCritique'>;
  logger: Logger;
  metrics?: Metrics;
  rate: number;
  /** Tool risks by name (from the registry). */
  riskOf: (tool: string) => string | undefined;
  /** A critique that disagrees is raised to admins (once per window), never acted on. */
  onConcern?: (turnId: string, risk: string) => void;
  onEnqueued?: () => void;
  random?: () => number;
}

/** A turn as it was answered: what the sampling rule looks at (the turn runner's step after the reply). */
export interface AnsweredTurn {
  id: string;
  orgId: string | null;
  /** The model that decided (null: no model was asked, nothing to review). */
  model: string | null;
  /** The brain's overall confidence, when it gave one. */
  confidence: number | null;
  /** Every tool the brain proposed in the turn. */
  tools: readonly string[];
}

/** The columns of the turn under review. */
interface ReviewedTurn {
  id: string;
  orgId: string | null;
  selfCritique: unknown;
  inputRedacted: string | null;
  contextSummary: unknown;
  reasoning: unknown;
  confidence: unknown;
  proposals: unknown;
  guardianAction: string | null;
  guardianReason: string | null;
  authResult: string | null;
  authReason: string | null;
  execution: unknown;
  decision: string;
  reasonCode: string;
  finalReply: string | null;
}

/**
 * Self-critique of sampled turns (R-B6). Sampling happens after the reply was sent; the critique itself
 * is a `work` item (another LLM call, counted in the daily cost), so it never delays a reply. Its verdict
 * is stored in the turn record, counted, and — when it disagrees — raised to admins; the decision stays
 * as it was (nothing changes silently, and nothing changes at all).
 */
export class SelfCritic {
  private readonly sql: Sql;

  constructor(private readonly o: SelfCriticOptions) {
    this.sql = o.sql ?? sqlRunner(o.db);
  }

  /**
   * The critique item of an answered turn when the turn is sampled, else null. The turn's last statement
   * enqueues it with the turn record (no round trip of its own); the caller wakes a worker with
   * {@link enqueued}.
   */
  sample(turn: AnsweredTurn): (EnqueueInput & { maxAttempts: number }) | null {
    if (!turn.model) return null;
    const risks = turn.tools.map((t) => this.o.riskOf(t) ?? 'unknown');
    const reason = critiqueReason({ confidence: turn.confidence, proposedRisks: risks }, this.o.rate, this.o.random);
    if (!reason) return null;
    return {
      type: 'work',
      payload: { kind: 'self_critique', turnId: turn.id, reason },
      orderingKey: `critique:${turn.id}`,
      dedupeKey: `critique:${turn.id}`,
      maxAttempts: 2,
    };
  }

  /** A sampled turn's critique item was stored: a worker is woken for it. */
  enqueued(): void {
    this.o.onEnqueued?.();
  }

  /**
   * The `work` item: one LLM call over the redacted turn record; the verdict is stored with the turn, and the item
   * completed, in one statement.
   */
  async handle(item: ClaimedItem): Promise<WorkOutcome | void> {
    const p = item.payload as { kind?: string; turnId?: string; reason?: CritiqueReason };
    if (p.kind !== 'self_critique' || !p.turnId) return;
    const [turn] = await this.sql<ReviewedTurn>(
      `SELECT id, "orgId", "selfCritique", "inputRedacted", "contextSummary", reasoning, confidence, proposals,
              "guardianAction", "guardianReason", "authResult", "authReason", execution, decision, "reasonCode",
              "finalReply"
         FROM turn_records WHERE id = $1`,
      [p.turnId],
    );
    if (!turn || turn.selfCritique !== null) return;
    const reason = p.reason ?? 'random';
    const at = new Date().toISOString();
    const review = await this.o.reviewer.review({
      input: turn.inputRedacted,
      context: turn.contextSummary,
      reasoning: turn.reasoning,
      confidence: turn.confidence,
      proposals: turn.proposals,
      guardian: { action: turn.guardianAction, reason: turn.guardianReason },
      authorization: { result: turn.authResult, reason: turn.authReason },
      execution: turn.execution,
      decision: turn.decision,
      reasonCode: turn.reasonCode,
      reply: turn.finalReply,
    });
    let stored: Record<string, unknown>;
    if (review.kind === 'skipped') {
      stored = { reason: p.reason, verdict: 'skipped', note: 'daily LLM cost limit reached' };
    } else if (review.kind === 'failed') {
      this.o.logger.warn({ turnId: turn.id, err: review.note }, 'self-critique call failed');
      stored = { reason, verdict: 'failed', note: review.note, at };
    } else if (review.kind === 'unusable') {
      stored = { reason, verdict: 'failed', note: 'unusable critique output', model: review.model, at };
    } else {
      const c = review.critique;
      const verdict = !c.appropriate || c.risk === 'high' ? 'concern' : 'ok';
      stored = { reason, verdict, ...c, model: review.model, at };
    }
    this.o.metrics?.selfCritiques.inc({ verdict: String(stored.verdict) });
    const call = review.kind === 'critique' || review.kind === 'unusable' ? review.call : undefined;
    await this.o.recorder.recordCritique({ id: turn.id, orgId: turn.orgId }, stored, call, item);
    if (stored.verdict === 'concern') this.o.onConcern?.(turn.id, String(stored.risk));
    return { completed: true };
  }
}
