import type { CacheTtl } from './llm-client';

/**
 * What a model call is for, as the routing rule reads it: its purpose (`turn`, `notice`, `report_confirmed`,
 * `conversation_summary`, `self_critique` …), the organisation (for the cache lifetime) and whether the model is
 * offered any capability tool — whether its answer could propose an action.
 */
export interface LlmJob {
  purpose: string;
  orgId?: string | null;
  mayAct: boolean;
}

/** The model of a call and the lifetime of its cached prefix; a turn keeps both for every step of its tool loop. */
export interface ModelRoute {
  model: string;
  cacheTtl: CacheTtl;
}

/**
 * Calls the small model may answer when routing is on: each is offered no capability tool, so whatever the model
 * answers it can only write words (a reply or a question), never propose an action. A turn of a public room or a
 * stranger (offered nothing, answered from context), a notice's text, the report of an action the person already
 * confirmed and that already ran, a conversation summary. Not the self-critique: a reviewer weaker than the
 * model it reviews would tell us little.
 */
const SMALL_PURPOSES: ReadonlySet<string> = new Set(['turn', 'notice', 'report_confirmed', 'conversation_summary']);

export interface RoutingRule {
  mainModel: string;
  smallModel: string;
  /** LLM_ROUTING: off = every call on the main model. */
  routing: boolean;
}

/**
 * The routing rule (a rule, not a model): the main model for every call that may act, the small model for the
 * purposes above when the call offers no capability tool. The steps of one turn never come here: they keep the
 * model of the turn's first decision (caches and thinking blocks are per model).
 */
export function routeModel(job: LlmJob, rule: RoutingRule): string {
  if (!rule.routing || job.mayAct || !SMALL_PURPOSES.has(job.purpose)) return rule.mainModel;
  return rule.smallModel;
}
