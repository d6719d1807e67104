import { z } from 'zod';
import type Anthropic from '@anthropic-ai/sdk';
import type { BrainOutput, ParameterSource, ToolProposal } from '../core/proposal';

/** Names of the meta-tools that shape an answer without doing anything. */
export const REPLY_TOOL = 'reply';
export const CLARIFY_TOOL = 'ask_clarification';

// Field meanings are in the stable system prompt (prompts/system.md); the strict schemas only give the shape.
const str = { type: 'string' } as const;
const strs = { type: 'array', items: str } as const;
const reasoningBase = { intent_understanding: str, context_used: strs };
const confidenceSchema = {
  type: 'object',
  properties: { overall: { type: 'number' }, intent: { type: 'number' }, parameters: { type: 'number' } },
  required: ['overall', 'intent', 'parameters'],
  additionalProperties: false,
} as const;

function obj(properties: Record<string, unknown>, required: string[]): Record<string, unknown> {
  return { type: 'object', properties, required, additionalProperties: false };
}

/** The `reply` and `ask_clarification` tools (deterministic JSON, part of the cached prefix). */
export function metaTools(): Anthropic.Messages.Tool[] {
  return [
    {
      name: REPLY_TOOL,
      description: 'Answer in words, no action: conversation, explanations, reporting results.',
      strict: true,
      input_schema: obj(
        {
          reasoning: obj(
            {
              ...reasoningBase,
              no_tool_reason: str,
              response_strategy: str,
            },
            ['intent_understanding', 'context_used', 'no_tool_reason', 'response_strategy'],
          ),
          confidence: confidenceSchema,
          text: { type: 'string', description: 'The reply, in the persona, 3–5 sentences, ending with a next step.' },
        },
        ['reasoning', 'confidence', 'text'],
      ) as Anthropic.Messages.Tool['input_schema'],
    },
    {
      name: CLARIFY_TOOL,
      description:
        'Ask one short question about something essential that is ambiguous or missing; candidates as options.',
      strict: true,
      input_schema: obj(
        {
          reasoning: obj(
            {
              ...reasoningBase,
              ambiguity_detected: str,
              possible_interpretations: strs,
            },
            ['intent_understanding', 'context_used', 'ambiguity_detected', 'possible_interpretations'],
          ),
          confidence: confidenceSchema,
          question: str,
          options: strs,
        },
        ['reasoning', 'confidence', 'question', 'options'],
      ) as Anthropic.Messages.Tool['input_schema'],
    },
  ];
}

/**
 * The envelope around a capability's parameters: `reasoning`, `confidence`, `action_summary`, the tool's
 * `parameters` and `parameter_sources`. Their shape is defined once, in the stable system prompt
 * (prompts/system.md, "Capability calls"), not repeated in every tool: the per-tool wrapper stays a few
 * hundred bytes, so 18 tools fit in a small cached prefix (issue 10). {@link parseModelOutput} checks it.
 */
export function capabilityInputSchema(parameters: Record<string, unknown>): Anthropic.Messages.Tool['input_schema'] {
  return {
    type: 'object',
    // `{}`: the shape is the one the system prompt defines (the same for every tool; checked on parsing).
    properties: { reasoning: {}, confidence: {}, action_summary: {}, parameters, parameter_sources: {} },
    required: ['reasoning', 'confidence', 'action_summary', 'parameters', 'parameter_sources'],
  } as Anthropic.Messages.Tool['input_schema'];
}

const ZScore = z.number().min(0).max(1);
const ZConfidence = z.object({ overall: ZScore, intent: ZScore.optional(), parameters: ZScore.optional() });
/** R-C3: reasoning must be a real sentence. */
export const MIN_REASONING_CHARS = 20;
const ZIntent = z.string().trim().min(1, 'reasoning.intent_understanding is missing');
const ZStrings = z.array(z.string()).optional();

const ZReplyInput = z.object({
  reasoning: z.object({
    intent_understanding: ZIntent,
    context_used: ZStrings,
    no_tool_reason: z.string().optional(),
    response_strategy: z.string().optional(),
  }),
  confidence: ZConfidence,
  text: z.string().trim().min(1, 'text is empty'),
});
const ZClarifyInput = z.object({
  reasoning: z.object({
    intent_understanding: ZIntent,
    context_used: ZStrings,
    ambiguity_detected: z.string().optional(),
    possible_interpretations: ZStrings,
  }),
  confidence: ZConfidence,
  question: z.string().trim().min(1, 'question is empty'),
  options: z.array(z.string()).default([]),
});
const ZCapabilityInput = z.object({
  reasoning: z.object({
    intent_understanding: ZIntent,
    context_used: ZStrings,
    tool_selection_reason: z.string().optional(),
    alternatives_considered: ZStrings,
  }),
  confidence: ZConfidence,
  action_summary: z.string().max(500).optional(),
  parameters: z.record(z.string(), z.unknown()),
  parameter_sources: z
    .array(z.object({ name: z.string(), source: z.enum(['user_message', 'context', 'inferred', 'default']) }))
    .optional(),
});

export type ParseResult =
  { ok: true; output: BrainOutput } | { ok: false; problem: 'no_tool' | 'invalid'; detail: string };

function reasoningLength(r: Record<string, unknown>): number {
  return Object.values(r)
    .flatMap((v) => (Array.isArray(v) ? v : [v]))
    .filter((v) => typeof v === 'string')
    .join('')
    .trim().length;
}

/**
 * Turns the model's content blocks into a BrainOutput. Blocks are picked by type (thinking blocks may
 * come first). A text-only answer is `no_tool`; schema problems or too-short reasoning are `invalid`.
 */
export function parseModelOutput(content: Anthropic.Messages.ContentBlock[]): ParseResult {
  const uses = content.filter((b): b is Anthropic.Messages.ToolUseBlock => b.type === 'tool_use');
  if (uses.length === 0) return { ok: false, problem: 'no_tool', detail: 'no tool call in the answer' };
  const meta = uses.filter((u) => u.name === REPLY_TOOL || u.name === CLARIFY_TOOL);
  if (meta.length > 0 && meta.length !== uses.length)
    return { ok: false, problem: 'invalid', detail: 'reply mixed with capability calls' };
  if (meta.length > 1) return { ok: false, problem: 'invalid', detail: 'more than one reply' };
  const first = uses[0]!;
  if (first.name === REPLY_TOOL) {
    const p = ZReplyInput.safeParse(first.input);
    if (!p.success) return { ok: false, problem: 'invalid', detail: describe(p.error) };
    if (reasoningLength(p.data.reasoning) < MIN_REASONING_CHARS)
      return { ok: false, problem: 'invalid', detail: 'reasoning is shorter than 20 characters' };
    return {
      ok: true,
      output: { type: 'text_response', reasoning: p.data.reasoning, confidence: p.data.confidence, text: p.data.text },
    };
  }
  if (first.name === CLARIFY_TOOL) {
    const p = ZClarifyInput.safeParse(first.input);
    if (!p.success) return { ok: false, problem: 'invalid', detail: describe(p.error) };
    if (reasoningLength(p.data.reasoning) < MIN_REASONING_CHARS)
      return { ok: false, problem: 'invalid', detail: 'reasoning is shorter than 20 characters' };
    return {
      ok: true,
      output: {
        type: 'clarification_needed',
        reasoning: p.data.reasoning,
        confidence: p.data.confidence,
        question: p.data.question,
        options: p.data.options,
      },
    };
  }
  // Capability proposals: the meta fields of the first call describe the step; every call is validated.
  const proposals: ToolProposal[] = [];
  let reasoning: z.output<typeof ZCapabilityInput>['reasoning'] | undefined;
  let confidence: z.output<typeof ZConfidence> | undefined;
  for (const u of uses) {
    const p = ZCapabilityInput.safeParse(u.input);
    if (!p.success) return { ok: false, problem: 'invalid', detail: `${u.name}: ${describe(p.error)}` };
    if (reasoningLength(p.data.reasoning) < MIN_REASONING_CHARS)
      return { ok: false, problem: 'invalid', detail: `${u.name}: reasoning is shorter than 20 characters` };
    reasoning ??= p.data.reasoning;
    // Several proposals in one step are only as certain as the least certain one.
    const prev: z.output<typeof ZConfidence> | undefined = confidence;
    confidence = prev ? { ...prev, overall: Math.min(prev.overall, p.data.confidence.overall) } : p.data.confidence;
    const sources: Record<string, ParameterSource> = {};
    for (const s of p.data.parameter_sources ?? []) sources[s.name] = s.source;
    proposals.push({
      id: u.id,
      toolName: u.name,
      parameters: p.data.parameters,
      parameterSources: sources,
      summary: p.data.action_summary,
    });
  }
  return { ok: true, output: { type: 'tool_call', reasoning: reasoning!, confidence: confidence!, proposals } };
}

function describe(err: z.ZodError): string {
  return err.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
}
