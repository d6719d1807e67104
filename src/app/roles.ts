import type { Env } from '../config/env';
import type { WorkType } from '../queue/work-queue';

/** What a process does (`HISHO_ROLE`): every role by default, or one of them when intake and turns run apart. */
export type Role = Env['HISHO_ROLE'];

/**
 * What a role runs. Seed 002 §10.3: processes differ only in what they claim — every role stores what it is given
 * and posts through the outbox; the work queue in PostgreSQL is what connects them.
 */
export interface RoleDuties {
  /** Work item kinds its claim loops take (none: no claim loops). */
  claims: readonly WorkType[];
  /** Takes messages in: the webhooks, the console, /admin, and Discord's messages and button clicks. */
  intake: boolean;
  /** Closes the buttons of decided confirmations (a platform edit, as a turn's post is). */
  closesQuestions: boolean;
  /** The notice scheduler, the reminder sweep, the alert thresholds and the nightly maintenance. */
  background: boolean;
  /**
   * How messages stored in one process reach the claim loops of another at once (PostgreSQL NOTIFY on
   * `hisho_work`; the pool's poll stays the fallback): `notify` for a role that stores messages it does not
   * claim, `listen` for one that claims messages it does not store. In `all` the intake wakes its own loops.
   */
  stored: 'notify' | 'listen' | 'none';
}

const DUTIES: Record<Role, RoleDuties> = {
  all: {
    claims: ['user_request', 'notification', 'work'],
    intake: true,
    closesQuestions: true,
    background: true,
    stored: 'none',
  },
  intake: { claims: [], intake: true, closesQuestions: false, background: false, stored: 'notify' },
  // Turns and notices: what a person waits for (replies, reminders, scheduled notices, alerts, apologies).
  turns: {
    claims: ['user_request', 'notification'],
    intake: false,
    closesQuestions: true,
    background: false,
    stored: 'listen',
  },
  // Background work items: self-critiques, conversation summaries, multi-step work (R-W1).
  background: { claims: ['work'], intake: false, closesQuestions: false, background: true, stored: 'none' },
};

export function dutiesOf(role: Role): RoleDuties {
  return DUTIES[role];
}
