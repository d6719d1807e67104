/**
 * Scoring one model answer against a case's acceptable outcomes. The answer is judged as the person
 * would see it: parameters after the Guardian's fixes (「明日」 → a date, 「自分」 → the sender), people as
 * the handler's resolver reads them (an ambiguous name becomes a clarification), a proposal that the
 * Guardian or the Gate stops counts as a refusal.
 */
import { isAllWord } from '../src/guardian/param-values';
import { MEMBER_ROLES } from '../src/authorization/person-scope';
import type { BusinessCalendar } from '../src/core/business-calendar';
import { resolveDate } from '../src/guardian';
import type { ParamRole, ToolMeta } from '../src/tools/types';
import { acceptable, isAbsentOr, type EvalCase, type Outcome, type ParamExpectation } from './cases';
import { sampleValue } from './offline';

/** How a person parameter was read by the resolver. */
export type PersonReading =
  { status: 'found'; memberId: string } | { status: 'ambiguous'; memberIds: string[] } | { status: 'not_found' };

export interface ObservedProposal {
  tool: string;
  /** Parameters after the Guardian's normalisation (what would run). */
  params: Record<string, unknown>;
  guardian: { action: string; reasonCode: string };
  auth: { result: string; reasonCode: string };
  /** Person / target_user / recipients parameters as the resolver reads them, by parameter (and item). */
  persons: Record<string, PersonReading[]>;
}

/** What the model answered (its first decision of the turn). */
export type Observed =
  | { kind: 'tool'; proposals: ObservedProposal[] }
  | { kind: 'clarify'; question: string; options: string[] }
  | { kind: 'reply'; text: string }
  | { kind: 'error'; code: string; message: string };

/** Facts the scorer needs besides the answer. */
export interface ScoreFacts {
  meta: (tool: string) => ToolMeta | undefined;
  /** Member id → the words by which a question can offer them (name, aliases, department). */
  memberWords: (memberId: string) => string[];
  now: Date;
  timezone: string;
  /** The organisation's business calendar (its closing days), on which relative dates are read. */
  calendar: BusinessCalendar;
}

export interface Score {
  pass: boolean;
  /** The right kind of answer (and tool). */
  action: boolean;
  /** Right person(s), when the case is about people; undefined otherwise. */
  person?: boolean;
  /** Right date, when the case has a date; undefined otherwise. */
  date?: boolean;
  expected: string;
  got: string;
  /** Why it failed (empty when it passed). */
  notes: string[];
}

const norm = (s: string): string => s.normalize('NFKC').replace(/\s+/g, '').toLowerCase();
/** Parameters that name a member: the person-scope roles of the AuthorizationGate. */
const PERSON_PARAM_ROLES: readonly string[] = MEMBER_ROLES;

export function outcomeLabel(o: Outcome): string {
  return o.outcome === 'tool' ? `tool:${o.tool}` : o.outcome;
}

export function observedLabel(o: Observed): string {
  if (o.kind === 'tool') {
    const names = o.proposals.map((p) => p.tool).join('+');
    return stopped(o) ? `stopped(${names})` : `tool:${names}`;
  }
  return o.kind === 'error' ? `error:${o.code}` : o.kind;
}

/** Every proposal was stopped by the Guardian (BLOCK) or the Gate (DENIED): nothing would run. */
function stopped(o: Extract<Observed, { kind: 'tool' }>): boolean {
  return o.proposals.every((p) => p.guardian.action === 'BLOCK' || p.auth.result === 'DENIED');
}

interface Match {
  action: boolean;
  person?: boolean;
  date?: boolean;
  notes: string[];
}

/** Judges the answer against every acceptable outcome and keeps the best match. */
export function scoreCase(c: EvalCase, observed: Observed, facts: ScoreFacts): Score {
  const outcomes = acceptable(c);
  const expected = outcomeLabel(outcomes[0]!);
  const got = observedLabel(observed);
  const forbidden =
    observed.kind === 'tool'
      ? observed.proposals.filter((p) => c.expect.forbidTools.includes(p.tool)).map((p) => p.tool)
      : [];
  const matches = outcomes.map((o) => match(c, o, observed, facts));
  const full = (m: Match) => m.action && m.person !== false && m.date !== false && m.notes.length === 0;
  const best = matches.find(full) ?? matches.find((m) => m.action) ?? matches[0]!;
  const notes = [...best.notes, ...forbidden.map((t) => `proposed the forbidden tool ${t}`)];
  const pass = full(best) && forbidden.length === 0;
  const primary = matches[0]!;
  // The right kind of answer with wrong details reads 「tool:create_task (due)」 in the confusion list.
  const detail =
    !pass && best.action
      ? notes
          .map(noteKey)
          .filter((k, i, a) => a.indexOf(k) === i)
          .join(', ')
      : '';
  return {
    pass,
    action: best.action && forbidden.length === 0,
    expected,
    got: detail ? `${got} (${detail})` : got,
    notes: pass ? [] : notes,
    // A dimension is measured when the primary outcome names it; an answer of the wrong kind gets it wrong.
    ...(primary.person !== undefined ? { person: best.action && best.person !== false } : {}),
    ...(primary.date !== undefined ? { date: best.action && best.date !== false } : {}),
  };
}

/** A short key for a failure note: the parameter name, or what went wrong. */
function noteKey(note: string): string {
  const param = /^([a-z_]+): expected/.exec(note);
  if (param) return param[1]!;
  if (note.startsWith('the Guardian blocked')) return 'blocked';
  if (note.startsWith('the Gate denied')) return 'denied';
  if (note.startsWith('proposed the forbidden')) return 'forbidden tool';
  if (note.includes('offer')) return 'candidates';
  return note.startsWith('the text') ? 'text' : note;
}

function match(c: EvalCase, o: Outcome, obs: Observed, f: ScoreFacts): Match {
  const personDim =
    (o.outcome === 'tool' && Object.keys(o.params).some((k) => isPersonParam(f.meta(o.tool), k))) ||
    (o.outcome === 'clarify' && o.candidates.length > 0);
  const dateDim = o.outcome === 'tool' && Object.keys(o.params).some((k) => roleOf(f.meta(o.tool), k) === 'date');
  const miss = (note: string): Match => ({
    action: false,
    ...(personDim ? { person: false } : {}),
    ...(dateDim ? { date: false } : {}),
    notes: [note],
  });
  switch (o.outcome) {
    case 'reply':
      if (obs.kind !== 'reply') return miss(`expected a reply, got ${observedLabel(obs)}`);
      return { action: true, notes: includes(obs.text, o.textIncludes) };
    case 'refuse':
      if (obs.kind === 'reply' || obs.kind === 'clarify' || (obs.kind === 'tool' && stopped(obs)))
        return { action: true, notes: [] };
      return miss(`expected a refusal, got ${observedLabel(obs)}`);
    case 'clarify': {
      if (obs.kind === 'clarify') {
        const text = norm([obs.question, ...obs.options].join(' '));
        const missing = o.candidates.filter((id) => !f.memberWords(id).some((w) => text.includes(norm(w))));
        return {
          action: true,
          ...(personDim ? { person: missing.length === 0 } : {}),
          notes: [
            ...missing.map((id) => `the question does not offer ${id}`),
            ...includes([obs.question, ...obs.options].join(' '), o.textIncludes),
          ],
        };
      }
      // A proposal naming an ambiguous person makes the handler ask; that is the clarification the person sees.
      if (obs.kind === 'tool') {
        const asked = obs.proposals
          .flatMap((p) => Object.values(p.persons).flat())
          .find((r) => r.status === 'ambiguous');
        if (asked && asked.status === 'ambiguous') {
          const missing = o.candidates.filter((id) => !asked.memberIds.includes(id));
          return {
            action: true,
            ...(personDim ? { person: missing.length === 0 } : {}),
            notes: missing.map((id) => `the handler would not offer ${id}`),
          };
        }
      }
      return miss(`expected a clarification, got ${observedLabel(obs)}`);
    }
    case 'tool': {
      if (obs.kind !== 'tool') return miss(`expected tool ${o.tool}, got ${observedLabel(obs)}`);
      const candidates = obs.proposals.filter((p) => p.tool === o.tool);
      if (candidates.length === 0) return miss(`expected tool ${o.tool}, got ${observedLabel(obs)}`);
      const judged = candidates.map((p) => {
        const j = judgeParams(c, o, p, f);
        // The right call must also get through: a Guardian block or a Gate denial the case does not expect
        // (a permission claim in the reasoning, a confidence below 0.3, a department the Gate cannot read)
        // means the person does not get what they asked for.
        if (p.guardian.action === 'BLOCK' && o.verdict.guardian !== 'BLOCK')
          j.notes.push(`the Guardian blocked it (${p.guardian.reasonCode})`);
        else if (p.auth.result === 'DENIED' && o.verdict.auth !== 'DENIED')
          j.notes.push(`the Gate denied it (${p.auth.reasonCode})`);
        return j;
      });
      return judged.find((j) => j.notes.length === 0) ?? judged[0]!;
    }
  }
}

function includes(text: string, words: string[] | undefined): string[] {
  if (!words || words.some((w) => norm(text).includes(norm(w)))) return [];
  return [`the text contains none of ${words.join(', ')}`];
}

function roleOf(meta: ToolMeta | undefined, param: string): ParamRole | undefined {
  return meta?.paramRoles?.[param];
}

function isPersonParam(meta: ToolMeta | undefined, param: string): boolean {
  const r = roleOf(meta, param);
  return r !== undefined && PERSON_PARAM_ROLES.includes(r);
}

function judgeParams(c: EvalCase, o: Extract<Outcome, { outcome: 'tool' }>, p: ObservedProposal, f: ScoreFacts): Match {
  const meta = f.meta(o.tool);
  const notes: string[] = [];
  let person: boolean | undefined;
  let date: boolean | undefined;
  for (const [name, expected] of Object.entries(o.params)) {
    const role = roleOf(meta, name);
    const left = isAbsentOr(expected) && (p.params[name] === undefined || p.params[name] === null);
    const want: ParamExpectation = isAbsentOr(expected) ? expected.absentOr : expected;
    const ok = left
      ? true
      : isPersonParam(meta, name)
        ? personMatches(want, p.params[name], p.persons[name] ?? [])
        : role === 'date'
          ? dateMatches(want, p.params[name], f)
          : valueMatches(want, p.params[name], c.id);
    const got = JSON.stringify(p.params[name]) ?? 'nothing';
    if (!ok) notes.push(`${name}: expected ${JSON.stringify(sampleValue(want, c.id))}, got ${got}`);
    if (isPersonParam(meta, name)) person = (person ?? true) && ok;
    if (role === 'date') date = (date ?? true) && ok;
  }
  return { action: true, ...(person !== undefined ? { person } : {}), ...(date !== undefined ? { date } : {}), notes };
}

function personMatches(want: ParamExpectation, got: unknown, readings: PersonReading[]): boolean {
  if (want === 'all') return isAllWord(got);
  const found = readings.map((r) => (r.status === 'found' ? r.memberId : null));
  if (found.length === 0 || found.some((x) => x === null)) return false;
  if (Array.isArray(want)) return want.length === new Set(found).size && want.every((w) => found.includes(w));
  if (typeof want === 'string') return found.length === 1 && found[0] === want;
  if (typeof want === 'object' && 'oneOf' in want)
    return found.length === 1 && want.oneOf.map(String).includes(found[0]!);
  return false;
}

function dateMatches(want: ParamExpectation, got: unknown, f: ScoreFacts): boolean {
  if (typeof got !== 'string') return false;
  const g = resolveDate(got, f.now, f.timezone, f.calendar);
  if (!g.ok) return false;
  const options =
    typeof want === 'object' && !Array.isArray(want) && 'oneOf' in want ? want.oneOf.map(String) : [String(want)];
  return options.some((w) => {
    const e = resolveDate(w, f.now, f.timezone, f.calendar);
    return e.ok && e.date === g.date && (e.time === undefined || e.time === g.time);
  });
}

function valueMatches(want: ParamExpectation, got: unknown, caseId: string): boolean {
  if (typeof want === 'object' && !Array.isArray(want)) {
    if ('present' in want) return got !== undefined && got !== null;
    if ('fields' in want) return hasFields(want.fields, got);
    if ('containsAny' in want)
      return typeof got === 'string' && want.containsAny.some((w) => norm(got).includes(norm(w)));
    if ('absentOr' in want) return got === undefined || got === null || same(sampleValue(want, caseId), got);
    return want.oneOf.some((v) => same(sampleValue(v as ParamExpectation, caseId), got));
  }
  return same(sampleValue(want, caseId), got);
}

/** A value as a comparable string (objects with their keys in order, text NFKC). */
function canon(x: unknown): string {
  if (typeof x === 'string') return norm(x);
  if (typeof x !== 'object' || x === null) return JSON.stringify(x);
  if (Array.isArray(x)) return `[${x.map(canon).join(',')}]`;
  return `{${Object.keys(x)
    .sort()
    .map((k) => `${k}:${canon((x as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}

/**
 * True when `got` has every field of `want` with the same value (nested objects too). A list is compared as a set,
 * and one value stands for a list of it (the tools read `day: 15` as `day: [15]`).
 */
function hasFields(want: Record<string, unknown>, got: unknown): boolean {
  if (typeof got !== 'object' || got === null || Array.isArray(got)) return false;
  const g = got as Record<string, unknown>;
  return Object.entries(want).every(([k, expected]) => {
    if (isAbsentOr(expected) && (g[k] === undefined || g[k] === null)) return true;
    const v = isAbsentOr(expected) ? expected.absentOr : expected;
    if (Array.isArray(v) || Array.isArray(g[k])) {
      const set = (x: unknown) => [...new Set((Array.isArray(x) ? x : [x]).map(canon))].sort().join('|');
      return set(v) === set(g[k]);
    }
    if (typeof v === 'object' && v !== null) return hasFields(v as Record<string, unknown>, g[k]);
    return same(v, g[k]);
  });
}

function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'string' && typeof b === 'string') return norm(a) === norm(b);
  return JSON.stringify(a) === JSON.stringify(b);
}
