import type { Db } from '../db/prisma';
import { pgText, SqlParams, sqlRunner, type Sql } from '../db/sql';
import { completeCte, enqueueSelectCte, type ClaimedItem } from '../queue/work-queue';
import { initialContext, type StepContext } from './step-context';

/** Lifecycle of background work. */
export type WorkStatus = 'queued' | 'running' | 'waiting' | 'done' | 'failed' | 'cancelled';

export const FINISHED: readonly WorkStatus[] = ['done', 'failed', 'cancelled'];

/** The payload of the `work` items that run background work (self-critique's items are `self_critique`). */
export const BACKGROUND_WORK_KIND = 'background_work';

/** The payload of the `notification` item that reports the end of background work to its requester. */
export const WORK_REPORT_KIND = 'work_report';

export interface WorkRow {
  id: string;
  orgId: string;
  requesterMemberId: string;
  platform: string;
  roomId: string;
  accountId: string;
  goal: string;
  status: WorkStatus;
  stepContext: unknown;
  maxSteps: number | null;
  maxCostUsd: number | null;
  deadlineAt: Date | null;
  stepsDone: number;
  costUsd: number;
  runSeq: number;
  pendingActionId: string | null;
  reasonCode: string | null;
  reason: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

export interface NewWork {
  orgId: string;
  requesterMemberId: string;
  platform: string;
  roomId: string;
  accountId: string;
  goal: string;
  plan: readonly string[];
  /** Asked-for limits (capped by the configured defaults when the runner first takes the work). */
  maxSteps?: number;
  maxCostUsd?: number;
  maxMinutes?: number;
  /** The start_work call's idempotency key. */
  originKey: string;
}

/** What the runner holds while it runs a work item: the item's id and claim token. */
type Held = Pick<ClaimedItem, 'id' | 'claimToken'>;

/** CTE `name`: RETURNING 1 while `item`'s claim is held (writes of a worker that lost it change nothing). */
function heldCte(p: SqlParams, name: string, item: Held): string {
  return `${name} AS (SELECT 1 FROM work_items WHERE id = ${p.add(item.id.toString())}::bigint
    AND "claimedBy" = ${p.add(item.claimToken)} AND state = 'running')`;
}

/**
 * The one writer of `background_work` (R-W1): creating work (with its first `work` item, in one
 * statement), the step context after every step, waiting for a confirmation, finishing (with the report
 * notification, in one statement), cancelling.
 */
export class WorkStore {
  private readonly sql: Sql;

  constructor(private readonly db: Db) {
    this.sql = sqlRunner(db);
  }

  /**
   * Stores new work and enqueues its first `work` item in one statement. The same origin key (a retried
   * turn) returns the work created first.
   */
  async create(w: NewWork): Promise<{ id: string; created: boolean }> {
    const p = new SqlParams();
    const ctx = initialContext(w.plan);
    const requested = { maxSteps: w.maxSteps ?? null, maxCostUsd: w.maxCostUsd ?? null, maxMinutes: w.maxMinutes };
    const insert = `w AS (INSERT INTO background_work (id, "orgId", "requesterMemberId", platform, "roomId",
        "accountId", goal, "stepContext", "maxSteps", "maxCostUsd", "originKey")
      VALUES (gen_random_uuid()::text, ${p.add(w.orgId)}, ${p.add(w.requesterMemberId)}, ${p.add(w.platform)},
        ${p.add(w.roomId)}, ${p.add(w.accountId)}, ${p.add(pgText(w.goal))},
        ${p.add(JSON.stringify({ ...ctx, requested }))}::jsonb, ${p.add(requested.maxSteps)}::int,
        ${p.add(requested.maxCostUsd)}::float8, ${p.add(w.originKey)})
      ON CONFLICT ("originKey") DO NOTHING RETURNING id)`;
    const select = `SELECT 'work', jsonb_build_object('kind', '${BACKGROUND_WORK_KIND}', 'workId', w.id),
        'bgwork:' || w.id, 'bgwork:' || w.id || ':run:0', 5 FROM w`;
    const rows = await this.sql<{ id: string }>(
      `WITH ${insert}, ${enqueueSelectCte('q', select)} SELECT id FROM w`,
      p.values,
    );
    if (rows[0]) return { id: rows[0].id, created: true };
    const earlier = await this.db.backgroundWork.findUnique({ where: { originKey: w.originKey } });
    if (!earlier) throw new Error('background work neither created nor found');
    return { id: earlier.id, created: false };
  }

  async get(id: string): Promise<WorkRow | null> {
    return (await this.db.backgroundWork.findUnique({ where: { id } })) as WorkRow | null;
  }

  /** A member's work, newest first (status questions). */
  async listFor(orgId: string, memberId: string, take = 5): Promise<WorkRow[]> {
    return (await this.db.backgroundWork.findMany({
      where: { orgId, requesterMemberId: memberId },
      orderBy: { createdAt: 'desc' },
      take,
    })) as WorkRow[];
  }

  /** On the first run: the budget (asked-for limits capped by the defaults), and the work marked running. */
  async begin(
    item: Held,
    id: string,
    budget: { maxSteps: number; maxCostUsd: number; deadlineAt: Date },
  ): Promise<boolean> {
    const p = new SqlParams();
    const held = heldCte(p, 'h', item);
    const steps = p.add(budget.maxSteps);
    const cost = p.add(budget.maxCostUsd);
    const rows = await this.sql(
      `WITH ${held}
       UPDATE background_work SET status = 'running', "updatedAt" = now(),
         "maxSteps" = LEAST(COALESCE("maxSteps", ${steps}::int), ${steps}::int),
         "maxCostUsd" = LEAST(COALESCE("maxCostUsd", ${cost}::float8), ${cost}::float8),
         "deadlineAt" = COALESCE("deadlineAt", ${p.add(budget.deadlineAt)}::timestamptz AT TIME ZONE 'UTC')
       WHERE id = ${p.add(id)} AND status IN ('queued', 'running') AND EXISTS (SELECT 1 FROM h) RETURNING 1`,
      p.values,
    );
    return rows.length === 1;
  }

  /**
   * After a step (finished or failed): the step context and the counters, while the work runs and the claim
   * is held. False when the work was cancelled (or the claim lost) meanwhile: the runner stops.
   */
  async saveStep(
    item: Held,
    id: string,
    s: { ctx: StepContext; stepsDone: number; costUsd: number },
  ): Promise<boolean> {
    const p = new SqlParams();
    const rows = await this.sql(
      `WITH ${heldCte(p, 'h', item)}
       UPDATE background_work SET "stepContext" = ${p.add(JSON.stringify(s.ctx))}::jsonb,
         "stepsDone" = ${p.add(s.stepsDone)}::int, "costUsd" = ${p.add(s.costUsd)}::float8, "updatedAt" = now()
       WHERE id = ${p.add(id)} AND status = 'running' AND EXISTS (SELECT 1 FROM h) RETURNING 1`,
      p.values,
    );
    return rows.length === 1;
  }

  /**
   * The step needs the requester's confirmation: the work waits on the pending action, this item completes
   * and the next `work` item (which looks at the answer) is enqueued for `runAt` — one statement.
   */
  async wait(
    item: Held,
    w: Pick<WorkRow, 'id' | 'runSeq'>,
    s: { ctx: StepContext; costUsd: number; pendingActionId: string; runAt: Date },
  ): Promise<boolean> {
    return this.continueLater(item, w, { ...s, status: 'waiting' });
  }

  /** Still waiting for the answer: look again at `runAt` (this item completes, the next is enqueued). */
  async pollAgain(item: Held, w: Pick<WorkRow, 'id' | 'runSeq' | 'pendingActionId'>, runAt: Date): Promise<boolean> {
    return this.continueLater(item, w, { status: 'waiting', pendingActionId: w.pendingActionId, runAt });
  }

  private async continueLater(
    item: Held,
    w: Pick<WorkRow, 'id' | 'runSeq'>,
    s: { status: 'waiting'; pendingActionId: string | null; runAt: Date; ctx?: StepContext; costUsd?: number },
  ): Promise<boolean> {
    const p = new SqlParams();
    const next = w.runSeq + 1;
    const id = p.add(w.id);
    const ctxSet = s.ctx ? `, "stepContext" = ${p.add(JSON.stringify(s.ctx))}::jsonb` : '';
    const costSet = s.costUsd !== undefined ? `, "costUsd" = ${p.add(s.costUsd)}::float8` : '';
    const select = `SELECT 'work', jsonb_build_object('kind', '${BACKGROUND_WORK_KIND}', 'workId', u.id),
        'bgwork:' || u.id, 'bgwork:' || u.id || ':run:' || ${p.add(next)}::int, 5,
        ${p.add(s.runAt)}::timestamptz FROM u`;
    const rows = await this.sql(
      `WITH ${heldCte(p, 'h', item)},
       u AS (UPDATE background_work SET status = 'waiting', "pendingActionId" = ${p.add(s.pendingActionId)},
         "runSeq" = ${p.add(next)}::int, "updatedAt" = now()${ctxSet}${costSet}
         WHERE id = ${id} AND status IN ('running', 'waiting') AND EXISTS (SELECT 1 FROM h) RETURNING id),
       ${enqueueSelectCte('q', select, { runAt: true })},
       ${completeCte(p, 'c', item)}
       SELECT 1 FROM u`,
      p.values,
    );
    return rows.length === 1;
  }

  /** The awaited confirmation was answered: the work runs again. */
  async resume(item: Held, id: string): Promise<boolean> {
    const p = new SqlParams();
    const rows = await this.sql(
      `WITH ${heldCte(p, 'h', item)}
       UPDATE background_work SET status = 'running', "pendingActionId" = NULL, "updatedAt" = now()
       WHERE id = ${p.add(id)} AND status = 'waiting' AND EXISTS (SELECT 1 FROM h) RETURNING 1`,
      p.values,
    );
    return rows.length === 1;
  }

  /**
   * Ends the work (done, failed with a reason code, or cancelled because the requester left) and, when
   * `report`, enqueues the one report to the requester — with this item's completion, in one statement.
   * False when the work had already ended (a cancel won) or the claim was lost.
   */
  async finish(
    item: Held,
    id: string,
    end: {
      status: 'done' | 'failed' | 'cancelled';
      reasonCode: string;
      reason: string | null;
      ctx: StepContext;
      costUsd: number;
      report: boolean;
      /** Leave the work item to the queue (it gives up: ends `failed`, listed and alerted) instead of completing it. */
      givingUp?: boolean;
    },
  ): Promise<boolean> {
    const p = new SqlParams();
    const wid = p.add(id);
    const report = `SELECT 'notification', jsonb_build_object('kind', '${WORK_REPORT_KIND}', 'workId', u.id),
        'bgwork-report:' || u.id, 'bgwork-report:' || u.id, 3 FROM u WHERE ${end.report ? 'true' : 'false'}`;
    const rows = await this.sql(
      `WITH ${heldCte(p, 'h', item)},
       u AS (UPDATE background_work SET status = ${p.add(end.status)}, "reasonCode" = ${p.add(end.reasonCode)},
         reason = ${p.add(end.reason === null ? null : pgText(end.reason))},
         "stepContext" = ${p.add(JSON.stringify(end.ctx))}::jsonb, "costUsd" = ${p.add(end.costUsd)}::float8,
         "pendingActionId" = NULL, "finishedAt" = now(), "updatedAt" = now()
         WHERE id = ${wid} AND status IN ('queued', 'running', 'waiting') AND EXISTS (SELECT 1 FROM h) RETURNING id),
       ${enqueueSelectCte('q', report)}${
         end.givingUp
           ? ''
           : `,
       ${completeCte(p, 'c', item)}`
       }
       SELECT 1 FROM u`,
      p.values,
    );
    return rows.length === 1;
  }

  /**
   * Cancels unfinished work (the requester, or an admin, asked). A step running now finishes its call; the
   * runner sees the cancellation before the next step and stops without a report (the person was answered).
   */
  async cancel(id: string, byMemberId: string): Promise<'cancelled' | 'finished'> {
    const rows = await this.sql(
      `UPDATE background_work SET status = 'cancelled', "reasonCode" = 'W_CANCELLED',
         reason = $2, "finishedAt" = now(), "updatedAt" = now()
       WHERE id = $1 AND status IN ('queued', 'running', 'waiting') RETURNING 1`,
      [id, `cancelled by ${byMemberId}`],
    );
    return rows.length === 1 ? 'cancelled' : 'finished';
  }
}
