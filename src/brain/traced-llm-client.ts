import { captureContent, inSpan } from '../observability/tracing';
import { GEN_AI, GEN_AI_OPERATION, GEN_AI_PROVIDER, HISHO, spanName } from '../observability/genai';
import { safeRedactText } from '../observability/redact';
import type { LlmClient, LlmRequest, LlmResponse } from './llm-client';
import { costUsd } from './pricing';

/**
 * A `chat` span per model call (GenAI semantic conventions, `observability/genai.ts`): the model asked for and the
 * one that answered, the tokens by kind, the cost, why the model stopped. The composition root wraps the client in
 * it only when tracing is on. With content capture on (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`), the
 * answer's text, redacted, is `gen_ai.output.messages`; the prompt is never recorded (the turn's span has the
 * person's message).
 */
export function tracedLlmClient(llm: LlmClient): LlmClient {
  return {
    create: (req: LlmRequest) =>
      inSpan(
        spanName.chat(req.model),
        {
          kind: 'client',
          attributes: {
            [GEN_AI.operationName]: GEN_AI_OPERATION.chat,
            [GEN_AI.providerName]: GEN_AI_PROVIDER,
            [GEN_AI.requestModel]: req.model,
          },
        },
        async (span) => {
          const res = await llm.create(req);
          span.set({
            [GEN_AI.responseModel]: res.model,
            [GEN_AI.responseId]: res.requestId,
            [GEN_AI.finishReasons]: res.stopReason ? [res.stopReason] : undefined,
            [GEN_AI.inputTokens]: res.usage.inputTokens,
            [GEN_AI.outputTokens]: res.usage.outputTokens,
            [GEN_AI.cacheReadTokens]: res.usage.cacheReadTokens,
            [GEN_AI.cacheWriteTokens]: res.usage.cacheWriteTokens,
            [HISHO.costUsd]: costUsd(res.model, res.usage),
            ...(captureContent() ? { [GEN_AI.outputMessages]: outputMessages(res) } : {}),
          });
          return res;
        },
      ),
  };
}

/** The answer in the conventions' message shape, its text redacted; tool calls by name only. */
function outputMessages(res: LlmResponse): string {
  const parts = res.content.flatMap((p): Record<string, unknown>[] => {
    if (p.type === 'text') return [{ type: 'text', content: safeRedactText(p.text) }];
    if (p.type === 'tool_call') return [{ type: 'tool_call', id: p.id, name: p.name }];
    return [];
  });
  return JSON.stringify([{ role: 'assistant', parts, finish_reason: res.stopReason ?? undefined }]);
}
