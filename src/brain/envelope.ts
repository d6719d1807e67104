/**
 * THE envelope of every answer the model gives (issue 33): `reasoning` and `confidence` on every call, plus
 * `action_summary` and `parameter_sources` around a capability's `parameters`. Defined once, here: the JSON
 * Schemas the model reads (the meta-tools `reply` / `ask_clarification` and every capability tool) and the zod
 * schemas the answer is parsed with are both generated from these tables, so what the model is told and what
 * is accepted cannot drift apart. Field meanings are said once, in the stable system prompt (prompts/system.md).
 */
import { z } from 'zod';
import type { ParameterSource, Reasoning } from '../core/proposal';

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
 * An object schema with every property required. `closed` (the strict meta-tools) adds `additionalProperties:
 * false`, which strict tool use requires; capability tools are not strict and leave it out (bytes of the cached
 * prefix, sent with every request).
 */
function object(properties: Record<string, unknown>, closed: boolean): Record<string, unknown> {
  return {
    type: 'object',
    properties,
    required: Object.keys(properties),
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
 * `action_summary` and `parameter_sources`) around the call's own fields, every field required.
 */
export function envelopeSchema(
  kind: EnvelopeKind,
  own: Record<string, unknown>,
  o: { closed: boolean },
): Record<string, unknown> {
  const head = { reasoning: reasoningJson(kind, o.closed), confidence: confidenceJson(o.closed) };
  if (kind !== 'capability') return object({ ...head, ...own }, o.closed);
  const source = object({ name: str, source: { type: 'string', enum: [...PARAMETER_SOURCES] } }, o.closed);
  return object(
    { ...head, action_summary: str, ...own, parameter_sources: { type: 'array', items: source } },
    o.closed,
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
export const ZConfidence = z.preprocess(
  bareScore,
  z.object({ overall: ZScore, intent: ZScore.optional(), parameters: ZScore.optional() }),
);

const zodField = (t: FieldType) => (t === 'string' ? z.string().optional() : z.array(z.string()).optional());

/** The reasoning of a kind: `intent_understanding` must be there; the others are read when given. */
export function zodReasoning(kind: EnvelopeKind): z.ZodType<Reasoning> {
  const rest = Object.fromEntries(Object.entries(REASONING_FIELDS[kind]).map(([k, t]) => [k, zodField(t)]));
  return z.preprocess(
    bareReasoning,
    z.object({
      intent_understanding: z.string().trim().min(1, 'reasoning.intent_understanding is missing'),
      context_used: zodField(COMMON_REASONING.context_used!),
      ...rest,
    }),
  ) as z.ZodType<Reasoning>;
}

/** The envelope of a capability call (its `parameters` are checked by the tool's own schema later). */
export const ZCapabilityEnvelope = z.object({
  reasoning: zodReasoning('capability'),
  confidence: ZConfidence,
  action_summary: z.string().max(500).optional(),
  parameters: z.record(z.string(), z.unknown()),
  parameter_sources: z.array(z.object({ name: z.string(), source: z.enum(PARAMETER_SOURCES) })).optional(),
});
