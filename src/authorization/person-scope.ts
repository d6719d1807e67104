/**
 * THE table of what a tool may do with a person (issue 8, R-Z1): for each kind of person parameter, the
 * outcome by where the named person stands relative to the sender's data scope. The AuthorizationGate
 * is driven from it (targets.ts); README.md "Security model" shows the same table (a test keeps them equal).
 * Tools declare which parameters name a person with a role in `paramRoles` (handlers/), so a new tool is
 * covered without editing the gate.
 */

import type { PersonRole } from '../core/tool-meta';

export type { PersonRole };

/** Every person role, in table order. */
export const PERSON_ROLES: readonly PersonRole[] = [
  'target_user',
  'assignee',
  'reminder_target',
  'memory_subject',
  'task',
  'task_change',
  'recipients',
  'person',
];

/**
 * Where the named person stands. `self`: the sender (or the sender's own task); `in_scope`: in a
 * department the sender may see (R-Z1); `out_of_scope`: an existing member outside it; `top_secret`: in a
 * top-secret department the sender may not see; `unknown`: no active member (or task) matches.
 */
/** The roles whose parameter names a task, whose owner is looked up instead of a member. */
export const TASK_ROLES: readonly PersonRole[] = ['task', 'task_change'];

/** The roles whose parameter names a member. */
export const MEMBER_ROLES: readonly PersonRole[] = PERSON_ROLES.filter((r) => !TASK_ROLES.includes(r));

export type Relation = 'self' | 'in_scope' | 'out_of_scope' | 'top_secret' | 'unknown';

export const RELATIONS: readonly Relation[] = ['self', 'in_scope', 'out_of_scope', 'top_secret', 'unknown'];

export type Outcome = 'allow' | 'confirm' | 'deny';

/** One cell: allowed from level `allowFrom`, else asked first from level `confirmFrom`, else denied. */
export interface Cell {
  allowFrom?: number;
  confirmFrom?: number;
}

const ALLOW: Cell = { allowFrom: 0 };
const CONFIRM: Cell = { confirmFrom: 0 };
const DENY: Cell = {};

/** What each role means, for the README and the audit reasons. */
export const ROLE_LABELS: Readonly<Record<PersonRole, string>> = {
  target_user: 'whose data is read (search_tasks assignee, view_goals member, query_memory subject)',
  assignee: 'who gets the task (create_task assignee)',
  reminder_target: 'who is reminded (create_reminder person)',
  memory_subject: 'who a memory is about (save_memory subject)',
  task: 'whose task is completed (complete_task task_id: its assignee or creator)',
  task_change:
    "whose task is changed or cancelled (change_task, cancel_task task_id: its assignee; another's is asked first)",
  recipients: 'who is mentioned (announce recipients)',
  person: 'any other person parameter',
};

/** Person parameter × relation → outcome. */
export const PERSON_SCOPE_TABLE: Readonly<Record<PersonRole, Readonly<Record<Relation, Cell>>>> = {
  target_user: { self: ALLOW, in_scope: ALLOW, out_of_scope: DENY, top_secret: DENY, unknown: DENY },
  assignee: { self: ALLOW, in_scope: ALLOW, out_of_scope: DENY, top_secret: DENY, unknown: DENY },
  reminder_target: { self: ALLOW, in_scope: ALLOW, out_of_scope: DENY, top_secret: DENY, unknown: DENY },
  memory_subject: { self: ALLOW, in_scope: CONFIRM, out_of_scope: DENY, top_secret: DENY, unknown: DENY },
  task: { self: ALLOW, in_scope: { allowFrom: 3 }, out_of_scope: DENY, top_secret: DENY, unknown: DENY },
  task_change: { self: ALLOW, in_scope: CONFIRM, out_of_scope: DENY, top_secret: DENY, unknown: DENY },
  recipients: { self: ALLOW, in_scope: ALLOW, out_of_scope: CONFIRM, top_secret: DENY, unknown: DENY },
  person: { self: ALLOW, in_scope: ALLOW, out_of_scope: DENY, top_secret: DENY, unknown: DENY },
};

/**
 * A call that speaks for the whole organisation (save_memory of an organisation fact, declared by the
 * tool's `organisationWide`): allowed from level 3, asked first below.
 */
export const ORGANISATION_WIDE: Cell = { allowFrom: 3, confirmFrom: 0 };

/** The outcome of a cell at a level. */
export function outcomeAt(cell: Cell, level: number): Outcome {
  if (cell.allowFrom !== undefined && level >= cell.allowFrom) return 'allow';
  if (cell.confirmFrom !== undefined && level >= cell.confirmFrom) return 'confirm';
  return 'deny';
}

/** The outcome for a role and relation at a level. */
export function personOutcome(role: PersonRole, relation: Relation, level: number): Outcome {
  return outcomeAt(PERSON_SCOPE_TABLE[role][relation], level);
}

/** The most permissive of several outcomes (allow > confirm > deny). */
export function mostPermissive(outcomes: readonly Outcome[]): Outcome {
  if (outcomes.includes('allow')) return 'allow';
  return outcomes.includes('confirm') ? 'confirm' : 'deny';
}

/** 「allow」「confirm」「deny」「allow (level 3+), else deny」… */
export function describeCell(cell: Cell): string {
  const { allowFrom, confirmFrom } = cell;
  const confirm =
    confirmFrom === undefined ? 'deny' : confirmFrom === 0 ? 'confirm' : `confirm (level ${confirmFrom}+), else deny`;
  if (allowFrom === 0) return 'allow';
  return allowFrom === undefined ? confirm : `allow (level ${allowFrom}+), else ${confirm}`;
}

/** The table as Markdown (README "Security model"), with the organisation-wide rule under it. */
export function personScopeMarkdown(): string {
  const head = `| person parameter | ${RELATIONS.join(' | ')} |`;
  const rule = `|---|${RELATIONS.map(() => '---').join('|')}|`;
  const rows = PERSON_ROLES.map((role) => {
    const cells = RELATIONS.map((r) => describeCell(PERSON_SCOPE_TABLE[role][r]));
    return `| \`${role}\` — ${ROLE_LABELS[role]} | ${cells.join(' | ')} |`;
  });
  const orgWide =
    'Organisation-wide calls (an organisation fact saved with `save_memory`; tools declare ' +
    `\`organisationWide\`): ${describeCell(ORGANISATION_WIDE)}.`;
  return [head, rule, ...rows, '', orgWide].join('\n');
}
