import type Anthropic from '@anthropic-ai/sdk';
import type { ToolProposal } from '../core/proposal';

/**
 * The earlier steps of a turn (the model's tool calls and their results) in the Messages API's shape.
 * Opaque outside brain/: the pipeline only passes it back to {@link Brain.decide}.
 */
export type Continuation = readonly Anthropic.Messages.MessageParam[];

/** What one proposal produced, as the model hears it (`content`: JSON text or a short error message). */
export interface ToolResult {
  proposalId: string;
  content: string;
  isError: boolean;
}

function resultBlock(r: ToolResult): Anthropic.Messages.ToolResultBlockParam {
  return {
    type: 'tool_result',
    tool_use_id: r.proposalId,
    content: r.content,
    ...(r.isError ? { is_error: true } : {}),
  };
}

/** The continuation after a decision's tool calls (its `assistantContent`) were answered with `results`. */
export function nextStep(
  before: Continuation,
  decision: { assistantContent: Anthropic.Messages.ContentBlock[] },
  results: readonly ToolResult[],
): Continuation {
  return [
    ...before,
    { role: 'assistant', content: decision.assistantContent as Anthropic.Messages.ContentBlockParam[] },
    { role: 'user', content: results.map(resultBlock) },
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
    reasoning: {
      intent_understanding: a.reasoning || 'Confirmed action.',
      context_used: [],
      tool_selection_reason: 'Confirmed by the person.',
      alternatives_considered: [],
    },
    confidence: { overall: a.confidence, intent: a.confidence, parameters: a.confidence },
    action_summary: a.summary,
    parameters: a.proposal.parameters,
    parameter_sources: [],
  };
  const toolUse: Anthropic.Messages.ToolUseBlockParam = {
    type: 'tool_use',
    id: a.proposal.id,
    name: a.proposal.toolName,
    input,
  };
  return [
    { role: 'assistant', content: [toolUse] },
    { role: 'user', content: [resultBlock(a.result), { type: 'text', text: a.note }] },
  ];
}

/**
 * The continuation that asks the model to write an answer again: the turn so far, the answer as the model
 * gave it (`content`; or, when only its text is known, that text), then the note — as the result of its
 * `reply` call, so tool_use / tool_result pairing stays valid.
 */
export function rejectedAnswerContinuation(
  before: Continuation,
  answer: { content: readonly Anthropic.Messages.ContentBlock[] | null; text: string },
  note: string,
): Continuation {
  const uses = (answer.content ?? []).filter((b): b is Anthropic.Messages.ToolUseBlock => b.type === 'tool_use');
  if (!answer.content || uses.length === 0) {
    return [...before, { role: 'assistant', content: answer.text }, { role: 'user', content: note }];
  }
  return [
    ...before,
    { role: 'assistant', content: answer.content as Anthropic.Messages.ContentBlockParam[] },
    {
      role: 'user',
      content: uses.map((u) => ({ type: 'tool_result' as const, tool_use_id: u.id, is_error: true, content: note })),
    },
  ];
}
