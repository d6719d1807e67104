/**
 * Guardian decision for one tool proposal (SPEC §3.5, seed 003 §5.3.3b). The LLM only proposed the
 * call; this pure function decides ALLOW / CONFIRM / BLOCK / MODIFY from rule tables, the tool's own
 * declaration and the organisation's configuration. Deterministic: the clock is an input.
 */
import type { Confidence, Reasoning, ToolProposal } from '../core/proposal';
import type { ToolMeta } from '../core/tool-meta';
import type { GuardianConfig, GuardianPolicy } from './config';
import { runRules, verdictFromHit, type Rule } from './engine';
import { normaliseParameters, type Normalisation } from './normalise-params';
import {
  CONFIDENCE_RULES,
  CONSTITUTION_RULES,
  DANGEROUS_RULES,
  SECURITY_RULES,
  TOOL_RULES,
  policyRules,
  type ProposalRuleContext,
} from './rules-core';
import { APPROVAL_MODE_RULES, CONSISTENCY_RULES, PARAMETER_RULES } from './rules-params';
import { collectStrings } from './text-scan';
import type { GuardianVerdict, RuleTrace } from './verdict';
import { localDate } from '../core/zoned-time';
import type { BusinessCalendar } from '../core/business-calendar';

/** Facts about the turn the rules may use. */
export interface GuardianTurnContext {
  /** The asker's member id (replaces 「自分」/"me" in person and recipient parameters). */
  senderMemberId?: string;
  /** The asker's display name (informational; not used by the rules). */
  senderName?: string;
  /** Members in the room (quoted in the 「全員」 confirmation note). */
  roomMemberCount?: number;
  now: Date;
  /** IANA time zone of the organisation (dates are judged in it). */
  timezone: string;
  /** The organisation's business calendar (its closing days); absent → national holidays and weekends. */
  calendar?: BusinessCalendar;
  /**
   * Whether the call names anyone besides the sender (authorization/references.ts); absent → assumed (the
   * confidentiality rule is then as strict as for a call about others).
   */
  namesOthers?: boolean;
  /** Confidential topics that are the sender's work (the directory's `handles:` of their department). */
  senderHandles?: readonly string[];
}

/** Input of {@link evaluateProposal}. */
export interface EvaluateProposalInput {
  proposal: ToolProposal;
  /** The registry's declaration; undefined when the tool is unknown. */
  tool: ToolMeta | undefined;
  reasoning: Reasoning | null;
  confidence: Confidence | null;
  policies: GuardianPolicy[];
  config: GuardianConfig;
  context: GuardianTurnContext;
}

/** Priority 1–8 rules for a proposal, in table order (policy rules are per organisation). */
export function proposalRules(policies: readonly GuardianPolicy[]): Rule<ProposalRuleContext>[] {
  return [
    ...CONSTITUTION_RULES,
    ...SECURITY_RULES,
    ...DANGEROUS_RULES,
    ...policyRules(policies),
    ...CONFIDENCE_RULES,
    ...PARAMETER_RULES,
    ...CONSISTENCY_RULES,
    ...APPROVAL_MODE_RULES,
  ];
}

function todayIn(now: Date, timezone: string): string | undefined {
  try {
    return localDate(now, timezone);
  } catch {
    return undefined;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A confirmation also says when a date falls on a day off (「11/28は土曜日です」): the date stays as asked, the
 * person sees it before answering. Other verdicts are unchanged (the context's calendar line lets the model say it).
 */
function withDayOffNotes(verdict: GuardianVerdict, norm: Normalisation): GuardianVerdict {
  const notes = [...new Set(norm.dates.flatMap((d) => (d.dayOffJa ? [d.dayOffJa] : [])))];
  if (verdict.action !== 'CONFIRM' || notes.length === 0) return verdict;
  return { ...verdict, userNoteJa: [verdict.userNoteJa, ...notes].filter(Boolean).join('／') };
}

/**
 * Decides one proposal. Order: 0 tool exists/enabled → 1 constitution → 2 security → 3 dangerous →
 * 4 policies → 5 confidence → 6 parameters → 7 consistency → 8 strict approval mode. Inside a tier
 * the strictest enforced outcome wins; the first tier with a BLOCK or CONFIRM decides. Parameter fixes
 * are computed first so that tiers 6–7 see normalised values; they surface as MODIFY only when
 * nothing objects (and ride along on a CONFIRM so the confirmed call uses them).
 */
export function evaluateProposal(input: EvaluateProposalInput): GuardianVerdict {
  const { proposal, tool, config, context } = input;
  const trace: RuleTrace[] = [];
  const shadow = config.shadowRules;

  const pre = runRules(TOOL_RULES, { toolName: proposal.toolName, tool }, shadow, trace);
  if (pre.decided || !tool) {
    return verdictFromHit(
      pre.decided ?? {
        action: 'BLOCK',
        reasonCode: 'G_UNKNOWN_TOOL',
        reason: 'unknown tool',
        userNoteJa: 'その操作には対応していません',
      },
      trace,
    );
  }

  const raw = isRecord(proposal.parameters) ? proposal.parameters : {};
  const norm: Normalisation = normaliseParameters(raw, tool, context);
  if (raw !== proposal.parameters) norm.unfixable.push({ param: '(parameters)', why: 'parameters are not an object' });
  const fixesEnforced = !shadow.includes('consistency.fix') && !shadow.includes('G_PARAM_FIXED');

  const ctx: ProposalRuleContext = {
    proposal,
    tool,
    config,
    reasoning: input.reasoning,
    confidence: input.confidence,
    texts: collectStrings(raw),
    params: fixesEnforced ? norm.params : raw,
    norm,
    today: todayIn(context.now, context.timezone),
    namesOthers: context.namesOthers ?? true,
    senderHandles: context.senderHandles ?? [],
    ...(context.roomMemberCount !== undefined ? { roomMemberCount: context.roomMemberCount } : {}),
  };
  const result = runRules(proposalRules(input.policies), ctx, shadow, trace);
  const modified = fixesEnforced && norm.changed ? norm.params : undefined;
  if (result.decided) return withDayOffNotes(verdictFromHit(result.decided, trace, modified), norm);
  if (result.modify) return { ...result.modify, modifiedParameters: norm.params, trace };
  return { action: 'ALLOW', reasonCode: 'G_OK', reason: 'every rule passed', trace };
}
