import { z } from 'zod';
import { toolCalls, type LlmPart, type LlmTool } from './llm-client';
import type { BrainOutput, Reasoning, ToolProposal } from '../core/proposal';
import { envelopeSchema, MIN_REASONING_CHARS, ZCapabilityEnvelope, ZConfidence, ZReasoning } from './envelope';

/** Names of the meta-tools that shape an answer without doing anything. */
export const REPLY_TOOL = 'reply';
export const CLARIFY_TOOL = 'ask_clarification';

/** The `reply` and `ask_clarification` tools (deterministic JSON, part of the cached prefix; envelope.ts). */
export function metaTools(): LlmTool[] {
  const schema = (kind: 'reply' | 'clarify', own: Record<string, unknown>) =>
    envelopeSchema(kind, own, { closed: true });
  return [
    {
      name: REPLY_TOOL,
      description: 'Answer in words, no action: conversation, explanations, reporting results.',
      strict: true,
      inputSchema: schema('reply', { text: { type: 'string' } }),
    },
    {
      name: CLARIFY_TOOL,
      description:
        'Ask one short question about something essential that is ambiguous or missing; candidates as options.',
      strict: true,
      inputSchema: schema('clarify', {
        question: { type: 'string' },
        options: { type: 'array', items: { type: 'string' } },
      }),
    },
  ];
}

/**
 * The input schema of a capability tool: the envelope (`reasoning`, `confidence`, `summary`, `sources`, from
 * envelope.ts like the meta-tools') around the tool's own `parameters`. {@link parseModelOutput} checks it.
 */
export function capabilityInputSchema(parameters: Record<string, unknown>): Record<string, unknown> {
  return envelopeSchema('capability', { parameters }, { closed: false });
}

const ZReplyInput = z.object({
  reasoning: ZReasoning,
  confidence: ZConfidence,
  text: z.string().trim().min(1, 'text is empty'),
});
const ZClarifyInput = z.object({
  reasoning: ZReasoning,
  confidence: ZConfidence,
  question: z.string().trim().min(1, 'question is empty'),
  options: z.array(z.string()).default([]),
});
export type ParseResult =
  { ok: true; output: BrainOutput } | { ok: false; problem: 'no_tool' | 'invalid'; detail: string };

function reasoningLength(r: Reasoning): number {
  return Object.values(r)
    .flatMap((v) => (Array.isArray(v) ? v : [v]))
    .filter((v) => typeof v === 'string')
    .join('')
    .trim().length;
}

/**
 * Turns the model's answer into a BrainOutput. Parts are picked by type (thinking may come first). A
 * text-only answer is `no_tool`; schema problems or too-short reasoning are `invalid`.
 */
export function parseModelOutput(content: readonly LlmPart[]): ParseResult {
  const uses = toolCalls(content);
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
  let reasoning: z.output<typeof ZCapabilityEnvelope>['reasoning'] | undefined;
  let confidence: z.output<typeof ZConfidence> | undefined;
  for (const u of uses) {
    const p = ZCapabilityEnvelope.safeParse(u.input);
    if (!p.success) return { ok: false, problem: 'invalid', detail: `${u.name}: ${describe(p.error)}` };
    if (reasoningLength(p.data.reasoning) < MIN_REASONING_CHARS)
      return { ok: false, problem: 'invalid', detail: `${u.name}: reasoning is shorter than 20 characters` };
    reasoning ??= p.data.reasoning;
    // Several proposals in one step are only as certain as the least certain one.
    const prev: z.output<typeof ZConfidence> | undefined = confidence;
    confidence = prev ? { ...prev, overall: Math.min(prev.overall, p.data.confidence.overall) } : p.data.confidence;
    proposals.push({
      id: u.id,
      toolName: u.name,
      parameters: p.data.parameters,
      parameterSources: p.data.sources,
      summary: p.data.summary,
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
