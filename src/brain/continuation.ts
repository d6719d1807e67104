import type { ToolProposal } from '../core/proposal';
import { toolCalls, type LlmMessage, type LlmPart, type LlmToolResult } from './llm-client';

/**
 * The earlier steps of a turn (the model's tool calls and their results) as messages of the LlmClient port.
 * Opaque outside brain/: the pipeline only passes it back to {@link Brain.decide}.
 */
export type Continuation = readonly LlmMessage[];

/** What one proposal produced, as the model hears it (`content`: JSON text or a short error message). */
export interface ToolResult {
  proposalId: string;
  content: string;
  isError: boolean;
}

function resultPart(r: ToolResult): LlmToolResult {
  return { type: 'tool_result', callId: r.proposalId, content: r.content, ...(r.isError ? { isError: true } : {}) };
}

/**
 * The continuation after a decision's tool calls (its `assistantContent`, after the turns that led to it: tool
 * searches, retries) were answered with `results`.
 */
export function nextStep(
  before: Continuation,
  decision: { assistantContent: readonly LlmPart[]; lead?: Continuation },
  results: readonly ToolResult[],
): Continuation {
  return [
    ...before,
    ...(decision.lead ?? []),
    { role: 'assistant', content: decision.assistantContent },
    { role: 'user', content: results.map(resultPart) },
  ];
}

/** A confirmed action that has now run, for the model to report (its call restated, its result, a note). */
export interface ConfirmedAction {
  proposal: ToolProposal;
  /** The model's reasoning when it proposed the call, and its confidence then. */
  reasoning: string;
  confidence: number;
  summary: string;
  result: ToolResult;
  note: string;
}

/**
 * The continuation that asks the model to report a confirmed action: the stored call as the model's
 * tool use (so the result pairs with it), then its result and the note.
 */
export function confirmedActionContinuation(a: ConfirmedAction): Continuation {
  const input = {
    reasoning: a.reasoning || 'The person confirmed this action.',
    confidence: a.confidence,
    summary: a.summary,
    parameters: a.proposal.parameters,
    sources: a.proposal.parameterSources ?? {},
  };
  return [
    { role: 'assistant', content: [{ type: 'tool_call', id: a.proposal.id, name: a.proposal.toolName, input }] },
    { role: 'user', content: [resultPart(a.result), { type: 'text', text: a.note }] },
  ];
}

/**
 * The continuation that asks the model to write an answer again: the turn so far, the answer as the model
 * gave it (`content`; or, when only its text is known, that text), then the note — as the result of its
 * `reply` call, so tool_use / tool_result pairing stays valid.
 */
export function rejectedAnswerContinuation(
  before: Continuation,
  answer: { content: readonly LlmPart[] | null; text: string },
  note: string,
): Continuation {
  const uses = toolCalls(answer.content ?? []);
  if (!answer.content || uses.length === 0) {
    return [...before, { role: 'assistant', content: answer.text }, { role: 'user', content: note }];
  }
  return [
    ...before,
    { role: 'assistant', content: answer.content },
    { role: 'user', content: errorResults(uses, note) },
  ];
}

/** Every tool call answered with the same error note (keeps call / result pairing valid). */
export function errorResults(calls: readonly { id: string }[], note: string): LlmToolResult[] {
  return calls.map((c) => ({ type: 'tool_result', callId: c.id, content: note, isError: true }));
}
