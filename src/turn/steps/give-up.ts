import { randomUUID } from 'node:crypto';
import { personaMessage } from '../../core/messages';
import { AppError, asAppError, givingUp } from '../../core/app-error';
import { ClaimLostError } from '../../queue/work-queue';
import { turnAudit } from '../turn-audit';
import type { TurnDecision } from '../turn-decision';
import type { Started, TurnDeps } from '../turn-state';

/**
 * The failure path: a step threw. The work queue retries the item; on its last attempt the turn gives up
 * ({@link giveUp}) and the person is told. Returns the error to end this attempt with. Brain and LLM failures
 * never get here (they are decisions with a persona error reply); this is for infrastructure.
 */
export function turnFailed(t: Started, d: TurnDeps, err: unknown): Promise<unknown> | unknown {
  const { item, log } = t;
  const app = asAppError(err, 'DB_UNAVAILABLE');
  const lastAttempt = item.attempts >= item.maxAttempts;
  log.error(
    { errorId: app.errorId, code: app.code, attempt: item.attempts, lastAttempt, err: app.message },
    'turn failed',
  );
  d.metrics.errors.inc({ code: app.code });
  if (err instanceof ClaimLostError) return err;
  // Retried by the work queue; after the last attempt the item gives up, and the person is told.
  if (!lastAttempt) return app;
  return giveUp(t, d, app);
}

/** Every allowed attempt died mid-turn (a crash, not an error): the turn gives up without thinking again. */
export function crashedEveryAttempt(t: Started): boolean {
  return t.item.attempts > t.item.maxAttempts;
}

/** The error a turn that {@link crashedEveryAttempt} gives up with. */
export function crashError(): AppError {
  return new AppError('INTERNAL', 'turn abandoned after repeated worker crashes');
}

/**
 * The turn gives up (its last attempt failed, or every attempt crashed): records the error turn and returns the
 * error to end the item with — never retried, so the work queue marks it failed with this error id, enqueues the
 * person's apology (`src/notices/apology.ts`: it looks at what reached the room first, so nothing is said twice)
 * and the service raises the `work_abandoned` alert (SPEC §5: never silent).
 */
export async function giveUp(t: Started, d: TurnDeps, app: AppError): Promise<AppError> {
  const { msg, log } = t;
  log.error({ errorId: app.errorId, code: app.code }, 'turn gave up: the person is told, the item ends failed');
  const text = personaMessage(d.prompts, `error.${app.code}`, t.language, { errorId: app.errorId });
  const decision: TurnDecision = {
    kind: 'error',
    reasonCode: app.code,
    decider: 'SYSTEM',
    calls: [],
    reply: { text },
    error: { errorId: app.errorId, category: app.category },
  };
  const facts = {
    id: randomUUID(),
    orgId: msg.orgId,
    platform: msg.platform,
    roomId: msg.roomId,
    accountId: msg.senderAccountId,
    memberId: null,
    workItemId: null,
    input: msg.text,
    finalReply: text,
    totalMs: 0,
    shadow: false,
  };
  await d.recorder.record(turnAudit(decision, facts)).catch(() => undefined);
  return givingUp(app);
}
