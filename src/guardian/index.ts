/**
 * Guardian (SPEC §3.5): pure, deterministic, table-driven decisions on what the LLM proposed.
 * The LLM proposes; these functions decide ALLOW / CONFIRM / BLOCK / MODIFY with a reason code.
 */
export { REASON_CODES, severityOf } from './verdict';
export type {
  AllowVerdict,
  BlockVerdict,
  ConfirmVerdict,
  GuardianAction,
  GuardianVerdict,
  ModifyVerdict,
  ReasonCode,
  ReasonCodeOf,
  RuleTrace,
} from './verdict';
export {
  DEFAULT_CONFIDENTIAL_WORDS,
  DEFAULT_NG_PATTERNS,
  PERMISSION_CLAIM_PATTERNS,
  defaultGuardianConfig,
} from './config';
export type { ApprovalMode, GuardianConfig, GuardianPolicy } from './config';
export { evaluateProposal, proposalRules } from './evaluate-proposal';
export type { EvaluateProposalInput, GuardianTurnContext } from './evaluate-proposal';
export { checkBrainOutputMeta, checkReplyText, neutraliseMentions } from './check-reply';
export type { ReplyCheckResult } from './check-reply';
export { CLAIM_PATTERNS, checkReplyClaims } from './claims';
export type { ClaimCheckResult, ClaimKind, UnsupportedClaim } from './claims';
export { resolveDate } from './resolve-date';
export type { ResolvedDate } from './resolve-date';
export { normaliseParameters } from './normalise-params';
export type { Normalisation } from './normalise-params';
export { CONFIDENTIAL_TABLE, MIN_REASONING_CHARS, callKind, overallConfidence } from './rules-core';
export { collectStrings } from './text-scan';
export { PARAM_LIMITS } from './rules-params';
export { ALL_RECIPIENT_WORDS, SENDER_ALIASES, parseAmount } from './param-values';
export { RULE_LABELS, ruleLabel } from './rule-labels';
