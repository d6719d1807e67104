/**
 * Origin keys of background work. A step's calls are keyed by the work and the step number (like a turn's
 * by its work item), so a step run again after a crash returns what its first run did instead of doing it
 * twice; a confirmation asked by a step is posted under the step's reply key.
 */

/** The origin of step `n` of work `workId` (the executor adds the tool and which call of it it is). */
export function stepOrigin(workId: string, n: number): string {
  return `bgwork:${workId}:step:${n}`;
}

const STEP_CALL = /^bgwork:([0-9a-f-]{36}):step:\d+:/;

/** The work a call belongs to, from its idempotency key (null for calls made in a plain turn). */
export function workOfCallKey(idempotencyKey: string): string | null {
  return STEP_CALL.exec(idempotencyKey)?.[1] ?? null;
}
