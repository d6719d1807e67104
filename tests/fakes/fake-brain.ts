import type { Brain, BrainDecision, DecideInput } from '../../src/brain/brain';
import type { BrainOutput, ToolProposal } from '../../src/core/proposal';

const REASONING = {
  intent_understanding: 'The person asks for exactly this, in plain words.',
  context_used: ['message'],
};
const CONFIDENCE = (overall: number) => ({ overall, intent: overall, parameters: overall });

/** The brain answers in words. */
export function says(text: string): BrainOutput {
  return { type: 'text_response', reasoning: REASONING, confidence: CONFIDENCE(0.9), text };
}

/** The brain asks back. */
export function asks(question: string, options: string[] = []): BrainOutput {
  return { type: 'clarification_needed', reasoning: REASONING, confidence: CONFIDENCE(0.5), question, options };
}

let seq = 0;

/** The brain proposes capability calls (confidence 0.9 unless given). */
export function proposes(calls: { tool: string; params: Record<string, unknown> }[], overall = 0.9): BrainOutput {
  const proposals: ToolProposal[] = calls.map((c) => ({
    id: `toolu_${++seq}`,
    toolName: c.tool,
    parameters: c.params,
  }));
  return {
    type: 'tool_call',
    reasoning: { ...REASONING, tool_selection_reason: 'This tool does it.' },
    confidence: CONFIDENCE(overall),
    proposals,
  };
}

/**
 * A scripted brain (no model, no HTTP): each `decide` takes the next scripted answer (or throws the
 * scripted error) and records what it was asked — the tools offered, the continuation, the purpose.
 */
export class ScriptedBrain implements Pick<Brain, 'decide'> {
  readonly asked: DecideInput[] = [];
  private readonly answers: (BrainOutput | Error)[] = [];

  script(...answers: (BrainOutput | Error)[]): this {
    this.answers.push(...answers);
    return this;
  }

  get pending(): number {
    return this.answers.length;
  }

  async decide(input: DecideInput): Promise<BrainDecision> {
    this.asked.push(input);
    const next = this.answers.shift();
    if (!next) throw new Error(`the brain was asked (${input.purpose ?? 'turn'}) without a scripted answer`);
    if (next instanceof Error) throw next;
    const content: BrainDecision['assistantContent'] =
      next.type === 'tool_call'
        ? next.proposals.map((p) => ({
            type: 'tool_call',
            id: p.id,
            name: p.toolName,
            input: { parameters: p.parameters },
          }))
        : [{ type: 'tool_call', id: `toolu_${++seq}`, name: 'reply', input: {} }];
    const usage = { inputTokens: 100, outputTokens: 20, cacheWriteTokens: 0, cacheReadTokens: 0 };
    const model = input.route?.model ?? 'fake-model';
    const calls = [{ model, purpose: input.purpose ?? 'turn', usage, costUsd: 0.001, durationMs: 0 }];
    const route = input.route ?? { model, cacheTtl: '5m' as const };
    return { output: next, assistantContent: content, calls, model, route, retries: [] };
  }
}
