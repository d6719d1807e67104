/**
 * Checks of the evaluation set that need no model: every expected tool and parameter exists in the live
 * registry and validates with the tool's own zod schema, and every expected proposal gets the expected
 * verdicts from the real Guardian and the real AuthorizationGate in the case's situation.
 */
import { z } from 'zod';
import { authorize, handledTopics, resolveReferences, type UnresolvedReference } from '../src/authorization';
import type { Confidence, Reasoning, ToolProposal } from '../src/core/proposal';
import { defaultGuardianConfig, evaluateProposal, type GuardianVerdict } from '../src/guardian';
import type { AuthDecision } from '../src/authorization';
import type { ToolRegistry } from '../src/tools/registry';
import type { ToolDefinition } from '../src/tools/types';
import {
  acceptable,
  isAbsentOr,
  type EvalCase,
  type ExpectedVerdict,
  type ParamExpectation,
  type ToolOutcome,
} from './cases';
import { seededId, type PreparedCase } from './world';

/** The reasoning an expected proposal is checked with (a valid one: the constitution is not under test here). */
const EVAL_REASONING: Reasoning = {
  intent_understanding:
    'The person asked for exactly this action in the message; the parameters come from the message and the context.',
  context_used: ['message', 'context'],
  tool_selection_reason: 'This capability does what was asked.',
};

/** An expected proposal (the right answer, or the unsafe one a refusal case guards against). */
interface ExpectedProposal extends Omit<ToolOutcome, 'outcome'> {
  label: string;
}

function expectedProposals(c: EvalCase): ExpectedProposal[] {
  const out: ExpectedProposal[] = [];
  acceptable(c).forEach((o, i) => {
    const label = i === 0 ? 'expect' : `expect.alsoAccept[${i - 1}]`;
    if (o.outcome === 'tool') out.push({ ...o, label });
    if (o.outcome === 'refuse' && o.unsafe) out.push({ ...o.unsafe, label: `${label}.unsafe` });
  });
  return out;
}

const refOf = (caseId: string) => (v: unknown) =>
  typeof v === 'string' && /^@[tg]\d+$/.test(v) ? seededId(caseId, v.slice(1)) : v;

/** Rule fields as a right answer gives them (a field that may be left out, with its value). */
const sampleFields = (fields: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, isAbsentOr(v) ? v.absentOr : v]));

/** A value that satisfies the expectation (what a right answer could contain), `@t1` resolved. */
export function sampleValue(e: ParamExpectation, caseId: string): unknown {
  const ref = refOf(caseId);
  if (Array.isArray(e)) return e.map(ref);
  if (typeof e !== 'object') return ref(e);
  if ('oneOf' in e) return ref(e.oneOf[0]);
  if ('fields' in e) return sampleFields(e.fields);
  if ('absentOr' in e) return ref(e.absentOr);
  return 'containsAny' in e ? e.containsAny[0] : e.present;
}

export function sampleParams(params: Record<string, ParamExpectation>, caseId: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, sampleValue(v, caseId)]));
}

/**
 * Every parameter set a right answer may have: the first value of each expectation, then one set per alternative
 * (each further `oneOf` value, an `absentOr` parameter or rule field left out) differing in that one place only.
 * The offline checks validate and decide each of them.
 */
export function sampleVariants(
  params: Record<string, ParamExpectation>,
  caseId: string,
): { label: string; params: Record<string, unknown> }[] {
  const base = sampleParams(params, caseId);
  const out = [{ label: '', params: base }];
  for (const [k, e] of Object.entries(params)) {
    if (typeof e !== 'object' || Array.isArray(e)) continue;
    if ('oneOf' in e) {
      for (const v of e.oneOf.slice(1)) out.push({ label: `${k}=${v}`, params: { ...base, [k]: refOf(caseId)(v) } });
    }
    if ('absentOr' in e) {
      const { [k]: _left, ...rest } = base;
      out.push({ label: `${k} absent`, params: rest });
    }
    if ('fields' in e) {
      for (const [f, v] of Object.entries(e.fields)) {
        if (!isAbsentOr(v)) continue;
        const { [f]: _left, ...fields } = base[k] as Record<string, unknown>;
        out.push({ label: `${k}.${f} absent`, params: { ...base, [k]: fields } });
      }
    }
  }
  return out;
}

/**
 * Structural problems of a case that need no database: unknown tools, unknown parameters, parameter
 * values the tool's schema rejects, candidates that are not listed. Each message names the case.
 */
export function structuralProblems(c: EvalCase, registry: ToolRegistry): string[] {
  const problems: string[] = [];
  const at = (label: string) => `${c.file} case ${c.id} (${label})`;
  for (const p of expectedProposals(c)) {
    const def = registry.get(p.tool);
    if (!def) {
      problems.push(
        `${at(p.label)}: unknown tool "${p.tool}" (the registry has: ${registry
          .all()
          .map((t) => t.name)
          .join(', ')})`,
      );
      continue;
    }
    for (const v of sampleVariants(p.params, c.id)) {
      const label = v.label ? `${p.label}, ${v.label}` : p.label;
      problems.push(...paramProblems(def, v.params).map((m) => `${at(label)}: ${p.tool}: ${m}`));
    }
  }
  for (const t of c.expect.forbidTools) {
    if (!registry.get(t)) problems.push(`${at('expect.forbidTools')}: unknown tool "${t}"`);
  }
  return problems;
}

/** Unknown parameter names, then whatever the tool's own input schema says about the values. */
function paramProblems(def: ToolDefinition, params: Record<string, unknown>): string[] {
  if (!(def.input instanceof z.ZodObject)) return ['the tool input schema is not an object'];
  const known = Object.keys(def.input.shape);
  const unknown = Object.keys(params).filter((k) => !known.includes(k));
  if (unknown.length > 0) return unknown.map((k) => `unknown parameter "${k}" (the tool takes: ${known.join(', ')})`);
  const parsed = def.input.strict().safeParse(params);
  if (parsed.success) return [];
  return parsed.error.issues.map((i) => `invalid parameter "${i.path.join('.') || '(root)'}": ${i.message}`);
}

/** What the deciding layers say about one proposal in a prepared situation. */
export interface Verdicts {
  guardian: GuardianVerdict;
  auth: AuthDecision;
  /** The parameters the Gate checked: the Guardian's fixes, department names read as ids. */
  parameters: Record<string, unknown>;
  /** Names the directory does not know: the service asks who is meant instead of deciding (issue 40). */
  unresolved: UnresolvedReference[];
}

/** Runs one proposal through the real Guardian and (with the Guardian's fixes applied) the real Gate. */
export function decide(
  p: PreparedCase,
  registry: ToolRegistry,
  proposal: ToolProposal,
  confidence: Confidence,
  reasoning: Reasoning = EVAL_REASONING,
): Verdicts {
  const tool = registry.meta(proposal.toolName);
  const raw = isRecord(proposal.parameters) ? proposal.parameters : {};
  // As the proposal stage does: who the call names is read against the directory before either layer decides.
  const named = resolveReferences(tool, raw, p.directory, p.actor);
  const guardian = evaluateProposal({
    proposal,
    tool,
    reasoning,
    confidence,
    policies: p.policies,
    config: defaultGuardianConfig(),
    context: {
      senderMemberId: p.actor.memberId ?? undefined,
      senderName: p.actor.name ?? undefined,
      now: p.ctx.now,
      timezone: p.ctx.org.timezone,
      // The organisation's business calendar, as the proposal stage gives it (closing days such as 年末年始).
      calendar: { closingDays: p.ctx.org.closingDays ?? [] },
      namesOthers: named.namesOthers,
      senderHandles: handledTopics(p.actor, p.directory),
    },
  });
  const modified = guardian.modifiedParameters ?? raw;
  const refs = resolveReferences(tool, isRecord(modified) ? modified : {}, p.directory, p.actor);
  const auth = authorize({
    actor: p.actor,
    tool,
    proposal: { ...proposal, parameters: refs.parameters },
    directory: p.directory,
  });
  return { guardian, auth, parameters: refs.parameters, unresolved: refs.unresolved };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Problems that need the case's situation: verdict mismatches, tools not offered, unknown candidates. */
export function situationProblems(c: EvalCase, p: PreparedCase, registry: ToolRegistry): string[] {
  const problems: string[] = [];
  const at = (label: string) => `${c.file} case ${c.id} (${label})`;
  const offered = new Set(p.input.tools.map((t) => t.name));
  for (const e of expectedProposals(c)) {
    const overall = e.confidence;
    for (const variant of sampleVariants(e.params, c.id)) {
      const v = decide(
        p,
        registry,
        { id: 'toolu_eval', toolName: e.tool, parameters: variant.params },
        { overall, intent: overall, parameters: overall },
      );
      const diff = verdictDiff(e.verdict, v);
      const label = variant.label ? `${e.label}, ${variant.label}` : e.label;
      if (diff) problems.push(`${at(label)}: ${e.tool}: ${diff}`);
    }
    if (e.label.endsWith('.unsafe') && e.verdict.guardian !== 'BLOCK' && e.verdict.auth !== 'DENIED') {
      problems.push(`${at(e.label)}: an unsafe proposal must be stopped (Guardian BLOCK or Gate DENIED)`);
    }
    if (e.verdict.auth !== undefined && e.verdict.auth !== 'DENIED' && !offered.has(e.tool)) {
      problems.push(
        `${at(e.label)}: ${e.tool} is not offered to this sender (level ${p.actor.level}), ` +
          'so the model cannot propose it',
      );
    }
  }
  const members = new Set(p.directory.members.map((m) => m.id));
  for (const o of acceptable(c)) {
    if (o.outcome !== 'clarify') continue;
    for (const id of o.candidates)
      if (!members.has(id)) problems.push(`${at('candidates')}: "${id}" is not a member id of eval/org.yaml`);
  }
  return problems;
}

function verdictDiff(want: ExpectedVerdict, got: Verdicts): string | null {
  const g = got.guardian;
  const a = got.auth;
  const said = `the Guardian says ${g.action} ${g.reasonCode}, the Gate says ${a.result} ${a.reasonCode}`;
  if (g.action !== want.guardian) return `expected Guardian ${want.guardian}; ${said}`;
  if (want.guardianReason && g.reasonCode !== want.guardianReason)
    return `expected Guardian reason ${want.guardianReason}; ${said}`;
  if (want.auth && a.result !== want.auth) return `expected Gate ${want.auth}; ${said}`;
  if (want.authReason && a.reasonCode !== want.authReason) return `expected Gate reason ${want.authReason}; ${said}`;
  return null;
}
