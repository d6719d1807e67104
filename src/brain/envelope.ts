/**
 * THE envelope of every answer the model gives (issue 39, compacting issue 33's): `reasoning` (one or two
 * sentences) and `confidence` (a number) on every call, plus `summary` and `sources` around a capability's
 * `parameters`. The schema names the fields and their types only (≈ 170 bytes a tool instead of ≈ 1,100); what
 * they mean is said once, in the stable system prompt (prompts/system.md, "Every call"). The JSON Schemas the
 * model reads and the zod schemas the answer is parsed with are both built here, so they cannot drift apart.
 *
 * What the rules read of it (decision record 0010): the Guardian's constitution rules read the reasoning text
 * (present, ≥ 20 characters, no permission claim), its confidence rule reads the overall score; the confirmation
 * question shows the summary (after the claims check); self-critique samples on the overall score. Sources are
 * stored with the proposal (SPEC R-B1); no rule reads them.
 */
import { z } from 'zod';
import type { Confidence, ParameterSource, Reasoning } from '../core/proposal';

/** What a call is: an answer in words, a question, or a capability proposal. */
export type EnvelopeKind = 'reply' | 'clarify' | 'capability';

/** Where a capability parameter's value came from. */
export const PARAMETER_SOURCES = [
  'user_message',
  'context',
  'inferred',
  'default',
] as const satisfies readonly ParameterSource[];

// ---- JSON Schema (what the model reads) ----------------------------------------------------------------------

const HEAD = { reasoning: { type: 'string' }, confidence: { type: 'number' } } as const;

/**
 * The input schema of a call of this kind: `reasoning` and `confidence`, the call's own fields, and for a
 * capability `summary` before and `sources` after its `parameters`; every field required. `closed` (the strict
 * meta-tools): `additionalProperties: false`, as strict tool use wants.
 */
export function envelopeSchema(
  kind: EnvelopeKind,
  own: Record<string, unknown>,
  o: { closed: boolean },
): Record<string, unknown> {
  const properties =
    kind === 'capability'
      ? { ...HEAD, summary: { type: 'string' }, ...own, sources: { type: 'object' } }
      : { ...HEAD, ...own };
  return {
    type: 'object',
    properties,
    required: Object.keys(properties),
    ...(o.closed ? { additionalProperties: false } : {}),
  };
}

// ---- zod (what is accepted) ------------------------------------------------------------------------------------

/** R-C3: reasoning must be a real sentence (checked over all its text). */
export const MIN_REASONING_CHARS = 20;

/**
 * The reasoning: a string (the compact envelope) is the intent understanding; the structured object of issue 33
 * is still read (a stored call, an older prompt). Either way `intent_understanding` must be there and not blank.
 */
export const ZReasoning = z.preprocess(
  (v) => (typeof v === 'string' ? { intent_understanding: v } : v),
  z.looseObject({
    intent_understanding: z.string().trim().min(1, 'reasoning is missing'),
    context_used: z.array(z.string()).optional(),
  }),
) as unknown as z.ZodType<Reasoning>;

const ZScore = z.number().min(0).max(1);
/** The confidence: a number (the compact envelope) is the overall score; `{ overall, … }` is still read. */
export const ZConfidence = z.preprocess(
  (v) => (typeof v === 'number' ? { overall: v } : v),
  z.object({ overall: ZScore, intent: ZScore.optional(), parameters: ZScore.optional() }),
) as unknown as z.ZodType<Confidence>;

/**
 * Where each parameter came from, as `{ name: source }`. No rule decides on it: a missing or malformed map is
 * read as none (never a retry), and values outside the four are dropped.
 */
const ZSources = z
  .record(z.string(), z.unknown())
  .optional()
  .catch(undefined)
  .transform((m) => {
    const out: Record<string, ParameterSource> = {};
    for (const [k, v] of Object.entries(m ?? {}))
      if ((PARAMETER_SOURCES as readonly unknown[]).includes(v)) out[k] = v as ParameterSource;
    return out;
  });

/** The envelope of a capability call (its `parameters` are checked by the tool's own schema later). */
export const ZCapabilityEnvelope = z.object({
  reasoning: ZReasoning,
  confidence: ZConfidence,
  summary: z.string().max(500).optional().catch(undefined),
  parameters: z.record(z.string(), z.unknown()),
  sources: ZSources,
});
