/**
 * What the LLM Brain proposes (R-B1). The LLM decides nothing here: every field is input to the
 * Guardian and the AuthorizationGate.
 */

export type ParameterSource = 'user_message' | 'context' | 'inferred' | 'default';

export interface Reasoning {
  intent_understanding: string;
  context_used?: string[];
  tool_selection_reason?: string;
  no_tool_reason?: string;
  response_strategy?: string;
  ambiguity_detected?: string;
  possible_interpretations?: string[];
  alternatives_considered?: string[];
}

export interface Confidence {
  overall: number;
  intent?: number;
  parameters?: number;
}

export interface ToolProposal {
  /** The tool_use id from the model (used to return results). */
  id: string;
  toolName: string;
  parameters: Record<string, unknown>;
  parameterSources?: Record<string, ParameterSource>;
  /** The model's one-sentence description of the effect, for confirmation questions (checked before use). */
  summary?: string;
}

export type BrainOutput =
  | { type: 'tool_call'; reasoning: Reasoning; confidence: Confidence; proposals: ToolProposal[] }
  | { type: 'text_response'; reasoning: Reasoning; confidence: Confidence; text: string }
  | { type: 'clarification_needed'; reasoning: Reasoning; confidence: Confidence; question: string; options: string[] };

/** Flattened reasoning text (what the constitution checks read). */
export function reasoningText(r: Reasoning | null | undefined): string {
  if (!r) return '';
  return [
    r.intent_understanding,
    r.tool_selection_reason,
    r.no_tool_reason,
    r.response_strategy,
    r.ambiguity_detected,
    ...(r.context_used ?? []),
    ...(r.possible_interpretations ?? []),
    ...(r.alternatives_considered ?? []),
  ]
    .filter((s): s is string => typeof s === 'string' && s.length > 0)
    .join(' / ');
}
