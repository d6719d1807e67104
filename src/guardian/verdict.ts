/**
 * Guardian outcomes and reason codes (SPEC §3.5, R-G1; seed 003 §5.3.3–5.3.3b).
 * Every verdict carries exactly one reason code from {@link REASON_CODES} and the trace of every rule
 * that was evaluated, so an audit row can explain why a proposal ran, waited or was stopped.
 */

/** What the Guardian decides for one proposal. */
export type GuardianAction = 'ALLOW' | 'CONFIRM' | 'BLOCK' | 'MODIFY';

/** One evaluated rule, in evaluation order. */
export interface RuleTrace {
  /** Rule name, e.g. `dangerous.risk` or `policy:<id>` (the names `config.shadowRules` refers to). */
  rule: string;
  /** Tier of the decision tree: 0 tool, 1 constitution … 7 consistency, 8 approval mode. */
  priority: number;
  /** What the rule said (`PASS` = no objection). */
  outcome: GuardianAction | 'PASS';
  reasonCode?: string;
  /** False for shadow rules: evaluated and recorded, but without effect on the verdict. */
  enforced: boolean;
}

/** What every verdict carries: why (internal) and the rules evaluated. */
interface VerdictBase {
  /** English, internal (logs and audit). Never shown to users. */
  reason: string;
  trace: RuleTrace[];
}

/** Every rule passed: run the call as proposed. */
export interface AllowVerdict extends VerdictBase {
  action: 'ALLOW';
  reasonCode: ReasonCodeOf<'ALLOW'>;
  confirmationType?: never;
  userNoteJa?: never;
  modifiedParameters?: never;
  policyId?: never;
}

/** Nothing objects, but parameters were normalised: run the call with `modifiedParameters`. */
export interface ModifyVerdict extends VerdictBase {
  action: 'MODIFY';
  reasonCode: ReasonCodeOf<'MODIFY'>;
  modifiedParameters: Record<string, unknown>;
  confirmationType?: never;
  userNoteJa?: never;
  policyId?: never;
}

/** The reason code of a verdict, and the organisation policy behind it when it is a G_POLICY_* code. */
type WithPolicy<A extends 'CONFIRM' | 'BLOCK', P extends ReasonCodeOf<A>> =
  { reasonCode: Exclude<ReasonCodeOf<A>, P>; policyId?: never } | { reasonCode: P; policyId: string };

/** Ask the person first (once, or twice for `double`), with a short note of what to check. */
export type ConfirmVerdict = VerdictBase & {
  action: 'CONFIRM';
  /** `double` asks twice (high risk, very high amount, everyone). */
  confirmationType: 'single' | 'double';
  /** Short Japanese hint for the confirmation question, e.g. 「3人以上に送ります」. */
  userNoteJa: string;
  /** Normalised parameters, when normalisation changed something: the confirmed call runs with them. */
  modifiedParameters?: Record<string, unknown>;
} & WithPolicy<'CONFIRM', 'G_POLICY_CONFIRM'>;

/** Never run it; the person is told why in `userNoteJa`. */
export type BlockVerdict = VerdictBase & {
  action: 'BLOCK';
  /** Short Japanese hint for the blocked reply, e.g. 「この機能は現在停止中です」. */
  userNoteJa: string;
  confirmationType?: never;
  modifiedParameters?: never;
} & WithPolicy<'BLOCK', 'G_POLICY_BLOCK'>;

/**
 * The Guardian's decision on one proposal: each action carries only its own fields (a confirmation type only
 * on CONFIRM, parameters always on MODIFY and never on ALLOW or BLOCK, a policy only with a G_POLICY_* code,
 * a reason code of the action's own). Fields another action owns are declared `never`, so reading
 * `verdict.userNoteJa` needs no narrowing but setting it on an ALLOW does not type-check.
 */
export type GuardianVerdict = AllowVerdict | ModifyVerdict | ConfirmVerdict | BlockVerdict;

interface ReasonCodeInfo {
  /** The action this code is used with. */
  action: GuardianAction;
  description: string;
}

/** Every reason code the Guardian can emit, with its action and meaning (one table, R-G1). */
export const REASON_CODES = {
  G_UNKNOWN_TOOL: { action: 'BLOCK', description: 'The proposed tool is not registered.' },
  G_TOOL_DISABLED: { action: 'BLOCK', description: 'The proposed tool is registered but disabled.' },
  G_CONSTITUTION_NO_REASONING: { action: 'BLOCK', description: 'The brain output carries no reasoning (R-C3).' },
  G_CONSTITUTION_SHORT_REASONING: {
    action: 'BLOCK',
    description: 'The reasoning is shorter than 20 characters (R-C3).',
  },
  G_CONSTITUTION_PERMISSION_CLAIM: {
    action: 'BLOCK',
    description: 'The LLM asserted a permission decision in its reasoning.',
  },
  G_NG_PATTERN: {
    action: 'BLOCK',
    description: 'A secret-like value (password, API key, My Number, card number) was found.',
  },
  G_CONFIDENTIAL: { action: 'BLOCK', description: 'A confidential word (salary, evaluation, M&A …) was found.' },
  G_PERSONAL_IDENTIFIER: {
    action: 'BLOCK',
    description:
      'A memory would keep a personal identifier (My Number, bank account, card, passport) or health detail.',
  },
  G_DANGEROUS_CRITICAL: {
    action: 'BLOCK',
    description: 'The tool is declared risk critical: never run automatically.',
  },
  G_DANGEROUS_HIGH: { action: 'CONFIRM', description: 'The tool is declared risk high: double confirmation.' },
  G_DANGEROUS_MEDIUM: { action: 'CONFIRM', description: 'The tool is declared risk medium: confirmation.' },
  G_TOOL_REQUIRES_CONFIRMATION: {
    action: 'CONFIRM',
    description: 'The tool declares that it always needs confirmation.',
  },
  G_POLICY_BLOCK: { action: 'BLOCK', description: 'An organisation policy forbids this call.' },
  G_POLICY_CONFIRM: { action: 'CONFIRM', description: 'An organisation policy may be affected: confirm citing it.' },
  G_CONFIDENCE_VERY_LOW: { action: 'BLOCK', description: 'Overall confidence below 0.3 (or missing).' },
  G_CONFIDENCE_LOW: { action: 'CONFIRM', description: 'Overall confidence below 0.5: ask a question.' },
  G_CONFIDENCE_MEDIUM: { action: 'CONFIRM', description: 'Overall confidence below 0.7: light confirmation.' },
  G_AMOUNT_HIGH: { action: 'CONFIRM', description: 'Amount above 100,000 yen.' },
  G_AMOUNT_VERY_HIGH: { action: 'CONFIRM', description: 'Amount above 1,000,000 yen: double confirmation.' },
  G_RECIPIENTS_MANY: { action: 'CONFIRM', description: 'Three or more recipients.' },
  G_RECIPIENTS_MASS: {
    action: 'CONFIRM',
    description: 'Ten or more recipients: double confirmation with content check.',
  },
  G_RECIPIENTS_ALL: { action: 'CONFIRM', description: 'Sent to everyone: double confirmation.' },
  G_DELETE: { action: 'CONFIRM', description: 'Deletes one item.' },
  G_DELETE_BULK: { action: 'CONFIRM', description: 'Deletes several items (count shown).' },
  G_PARAM_FIXED: { action: 'MODIFY', description: 'Parameters were normalised (trim, sender, dates).' },
  G_PARAM_UNFIXABLE: { action: 'CONFIRM', description: 'A parameter value could not be interpreted.' },
  G_DATE_PAST: { action: 'CONFIRM', description: 'A date lies before today (organisation time zone).' },
  G_DATE_FAR_FUTURE: { action: 'CONFIRM', description: 'A date lies more than 365 days ahead.' },
  G_STRICT_MODE_CONFIRM: {
    action: 'CONFIRM',
    description: 'Strict approval mode: every tool with effects is confirmed (R-G2).',
  },
  G_OK: { action: 'ALLOW', description: 'Every rule passed.' },
  G_REPLY_OK: { action: 'ALLOW', description: 'The reply text passed the output checks.' },
  G_REPLY_MARKUP_NEUTRALISED: {
    action: 'MODIFY',
    description: 'Mass or raw mention markup in the reply was neutralised.',
  },
  G_REPLY_UNSUPPORTED_CLAIM: {
    action: 'MODIFY',
    description: 'The reply said something was done that no call executed in this turn: it was written again.',
  },
} as const satisfies Record<string, ReasonCodeInfo>;

/** A Guardian reason code. */
export type ReasonCode = keyof typeof REASON_CODES;

/** The reason codes used with one action (e.g. `ReasonCodeOf<'CONFIRM'>`). */
export type ReasonCodeOf<A extends GuardianAction> = {
  [K in ReasonCode]: (typeof REASON_CODES)[K]['action'] extends A ? K : never;
}[ReasonCode];

/** Strictness order used to pick the winner inside one tier: BLOCK > CONFIRM double > CONFIRM single > MODIFY. */
export function severityOf(action: GuardianAction | 'PASS', confirmationType?: 'single' | 'double'): number {
  switch (action) {
    case 'BLOCK':
      return 4;
    case 'CONFIRM':
      return confirmationType === 'double' ? 3 : 2;
    case 'MODIFY':
      return 1;
    default:
      return 0;
  }
}
