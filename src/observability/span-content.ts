import { safeRedactText, safeRedactValue } from './redact';

/**
 * What spans carry of a conversation when the operator opted in (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`,
 * `tracing.ts`): always redacted first, as for the logs (fail-closed: a placeholder, never the raw text).
 */

/** One message in the GenAI conventions' shape (`gen_ai.input.messages` / `gen_ai.output.messages`). */
export function messagesAttribute(role: 'user' | 'assistant', text: string): string {
  return JSON.stringify([{ role, parts: [{ type: 'text', content: safeRedactText(text) }] }]);
}

/** A structured value (a tool call's arguments or result) as redacted JSON. */
export function valueAttribute(value: unknown): string {
  return JSON.stringify(safeRedactValue(value) ?? null);
}
