/**
 * THE envelope of every answer the model gives (issue 33): `reasoning` and `confidence` on every call, plus
 * `action_summary` and `parameter_sources` around a capability's `parameters`. Defined once, here: the JSON
 * Schemas the model reads (the meta-tools `reply` / `ask_clarification` and every capability tool) and the zod
 * schemas the answer is parsed with are both generated from these tables, so what the model is told and what
 * is accepted cannot drift apart. Field meanings are said once, in the stable system prompt (prompts/system.md).
 */
import { z } from 'zod';
import type { Confidence, ParameterSource, Reasoning } from '../core/proposal';

/** What a call is: an answer in words, a question, or a capability proposal. */
export type EnvelopeKind = 'reply' | 'clarify' | 'capability';

type FieldType = 'string' | 'strings';

/**
 * The reasoning fields by kind. `intent_understanding` and `context_used` mean the same on every call and have
 * the same names; the rest say why this kind of answer was chosen.
 */
const REASONING_FIELDS: Readonly<Record<EnvelopeKind, Readonly<Record<string, FieldType>>>> = {
  reply: { no_tool_reason: 'string', response_strategy: 'string' },
  clarify: { ambiguity_detected: 'string', possible_interpretations: 'strings' },
  capability: { tool_selection_reason: 'string', alternatives_considered: 'strings' },
};
const COMMON_REASONING: Readonly<Record<string, FieldType>> = {
  intent_understanding: 'string',
  context_used: 'strings',
};

/** The confidence scores (0–1); `overall` is the one the Guardian reads. */
const CONFIDENCE_FIELDS = ['overall', 'intent', 'parameters'] as const;

/**
 * The fields an answer cannot do without (the parser rejects an answer missing one): the rest are read when
 * given. Capability schemas require exactly these inside `reasoning` and `confidence`; the strict meta-tools
 * require every field (strict tool use fills them all anyway).
 */
const NEEDED = new Set(['intent_understanding', 'overall', 'name', 'source']);

/** Where a capability parameter's value came from. */
export const PARAMETER_SOURCES = [
  'user_message',
  'context',
  'inferred',
  'default',
] as const satisfies readonly ParameterSource[];

// ---- JSON Schema (what the model reads) ----------------------------------------------------------------------

const str = { type: 'string' } as const;
const strs = { type: 'array', items: str } as const;
const json = (t: FieldType) => (t === 'string' ? str : strs);

/**
 * An object schema. `closed` (the strict meta-tools): every property required and `additionalProperties: false`,
 * as strict tool use wants. Otherwise (capability tools, not strict) only the {@link NEEDED} properties are
 * required, or all of them for the envelope itself (`all`): every byte here is in the cached prefix of every
 * request, once per tool.
 */
function object(properties: Record<string, unknown>, closed: boolean, all = false): Record<string, unknown> {
  const keys = Object.keys(properties);
  return {
    type: 'object',
    properties,
    required: closed || all ? keys : keys.filter((k) => NEEDED.has(k)),
    ...(closed ? { additionalProperties: false } : {}),
  };
}

function reasoningJson(kind: EnvelopeKind, closed: boolean): Record<string, unknown> {
  const fields = { ...COMMON_REASONING, ...REASONING_FIELDS[kind] };
  return object(Object.fromEntries(Object.entries(fields).map(([k, t]) => [k, json(t)])), closed);
}

function confidenceJson(closed: boolean): Record<string, unknown> {
  return object(Object.fromEntries(CONFIDENCE_FIELDS.map((k) => [k, { type: 'number' }])), closed);
}

/**
 * The input schema of a call of this kind: the envelope (`reasoning`, `confidence`, and for a capability
 * `action_summary` and `parameter_sources`) around the call's own fields, each of them required.
 */
export function envelopeSchema(
  kind: EnvelopeKind,
  own: Record<string, unknown>,
  o: { closed: boolean },
): Record<string, unknown> {
  const head = { reasoning: reasoningJson(kind, o.closed), confidence: confidenceJson(o.closed) };
  if (kind !== 'capability') return object({ ...head, ...own }, o.closed, true);
  const source = object({ name: str, source: { enum: [...PARAMETER_SOURCES] } }, o.closed);
  return object(
    { ...head, action_summary: str, ...own, parameter_sources: { type: 'array', items: source } },
    o.closed,
    true,
  );
}

// ---- zod (what is accepted) ------------------------------------------------------------------------------------

/** R-C3: reasoning must be a real sentence (checked over all its text). */
export const MIN_REASONING_CHARS = 20;

/**
 * Two deviations a model makes that keep the meaning (issue 33, measured in tests/brain/envelope.test.ts): a bare
 * number for `confidence` is the overall score, a string for `reasoning` is the intent understanding. Both are
 * read as that; anything else (a missing field, a score outside 0–1, an empty intent) is still invalid.
 */
const bareScore = (v: unknown) => (typeof v === 'number' ? { overall: v } : v);
const bareReasoning = (v: unknown) => (typeof v === 'string' ? { intent_understanding: v } : v);

const ZScore = z.number().min(0).max(1);
/** The confidence scores: the {@link NEEDED} one must be there. */
export const ZConfidence = z.preprocess(
  bareScore,
  z.object(Object.fromEntries(CONFIDENCE_FIELDS.map((k) => [k, NEEDED.has(k) ? ZScore : ZScore.optional()]))),
) as unknown as z.ZodType<Confidence>;

/** A reasoning field: a {@link NEEDED} one must be there and not blank; the others are read when given. */
function zodField(name: string, t: FieldType): z.ZodType {
  if (!NEEDED.has(name)) return t === 'string' ? z.string().optional() : z.array(z.string()).optional();
  return t === 'string' ? z.string().trim().min(1, `reasoning.${name} is missing`) : z.array(z.string());
}

/** The reasoning of a kind, from the same tables as its JSON Schema. */
export function zodReasoning(kind: EnvelopeKind): z.ZodType<Reasoning> {
  const fields = { ...COMMON_REASONING, ...REASONING_FIELDS[kind] };
  return z.preprocess(
    bareReasoning,
    z.object(Object.fromEntries(Object.entries(fields).map(([k, t]) => [k, zodField(k, t)]))),
  ) as unknown as z.ZodType<Reasoning>;
}

/** The envelope of a capability call (its `parameters` are checked by the tool's own schema later). */
export const ZCapabilityEnvelope = z.object({
  reasoning: zodReasoning('capability'),
  confidence: ZConfidence,
  action_summary: z.string().max(500).optional(),
  parameters: z.record(z.string(), z.unknown()),
  parameter_sources: z.array(z.object({ name: z.string(), source: z.enum(PARAMETER_SOURCES) })).optional(),
});
