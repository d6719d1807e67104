/**
 * What the rule layers (Guardian, AuthorizationGate) know about a tool: its declaration minus the handler
 * (shared vocabulary of guardian/, authorization/ and tools/; the declarations live in handlers/).
 */

/** What a parameter that names a person does with that person (the rows of authorization/person-scope.ts). */
export type PersonRole =
  'target_user' | 'assignee' | 'reminder_target' | 'memory_subject' | 'task' | 'task_change' | 'recipients' | 'person';

/**
 * What a successful call of a tool lets the reply say happened (「登録しました」「送りました」…): the
 * Guardian's claim table (guardian/claims.ts) has the phrases of each kind. Every tool with effects declares one.
 */
export type EffectKind =
  | 'create_task'
  | 'create_goal'
  | 'complete'
  | 'remind'
  | 'cancel'
  | 'remember'
  | 'forget'
  | 'send_message'
  | 'update'
  | 'start'
  | 'save';

/** How dangerous a capability is (Guardian priority 3). */
export type Risk = 'none' | 'medium' | 'high' | 'critical';

/**
 * What the Guardian and the AuthorizationGate know about a tool: its declaration minus the handler.
 * Everything here comes from the declaration in handlers/, never from the LLM.
 */
export interface ToolMeta {
  name: string;
  /** Effects such as `db.task_create`, `chatwork.post`; empty = read-only. */
  effects: readonly string[];
  /** What a successful call lets the reply claim was done; required when `effects` is not empty. */
  effectKind?: EffectKind;
  risk: Risk;
  /** Minimum sender level 1..6 (default 2). */
  requiredLevel: number;
  /** Always ask before running, whatever the tree says. */
  requiresConfirmation: boolean;
  enabled: boolean;
  /**
   * Parameter roles the rule layers understand, by parameter name:
   * `amount` (money, yen), `recipients` (array of person refs, or the string "all"), `date` (ISO date or
   * date-time or a relative Japanese expression), `target_department`, `deletion` (the ids being
   * deleted), `text` (free text posted or stored), and the person roles the AuthorizationGate checks
   * against the sender's scope with its outcome table (src/authorization/person-scope.ts): `target_user`
   * (whose data is read), `assignee`, `reminder_target`, `memory_subject`, `task` (a task id: its owner),
   * `task_change` (a task id being changed or cancelled: its assignee), `person` (any other person reference).
   */
  paramRoles?: Readonly<Record<string, ParamRole>>;
  /**
   * True when a call speaks for the whole organisation (e.g. saving an organisation fact): the gate then
   * applies the organisation-wide rule (level 3+, else confirm).
   */
  organisationWide?: (parameters: Readonly<Record<string, unknown>>) => boolean;
}

export type ParamRole = PersonRole | 'amount' | 'date' | 'target_department' | 'deletion' | 'text';

/** True when the tool changes something outside the conversation. */
export function hasEffects(meta: Pick<ToolMeta, 'effects'>): boolean {
  return meta.effects.length > 0;
}
