/**
 * The span and attribute names of Hisho's traces, in one place (issue 43). The `gen_ai.*` names are the GenAI
 * semantic conventions as published in OpenTelemetry semantic conventions **1.45.0** (the names of
 * `@opentelemetry/semantic-conventions` 1.45.0's incubating entry; status "Development", so they may still change:
 * a change is made here and nowhere else). `tests/observability/genai.test.ts` checks each name against that
 * package. `hisho.*` names are Hisho's own (the rules' decisions have no convention).
 */
export const GENAI_SEMCONV_VERSION = '1.45.0';

/** `gen_ai.operation.name` values, which also start the span names. */
export const GEN_AI_OPERATION = {
  invokeAgent: 'invoke_agent',
  chat: 'chat',
  executeTool: 'execute_tool',
} as const;

/** `gen_ai.provider.name` of the model Hisho calls. */
export const GEN_AI_PROVIDER = 'anthropic';

/** The agent's name (`gen_ai.agent.name`). */
export const GEN_AI_AGENT = 'Hisho';

export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheWriteTokens: 'gen_ai.usage.cache_creation.input_tokens',
  toolName: 'gen_ai.tool.name',
  toolType: 'gen_ai.tool.type',
  toolCallId: 'gen_ai.tool.call.id',
  /** Only with content capture on (redacted). */
  toolArguments: 'gen_ai.tool.call.arguments',
  /** Only with content capture on (redacted). */
  toolResult: 'gen_ai.tool.call.result',
  /** Only with content capture on (redacted). */
  inputMessages: 'gen_ai.input.messages',
  /** Only with content capture on (redacted). */
  outputMessages: 'gen_ai.output.messages',
} as const;

/** `error.type` (general conventions): the error's code or class. */
export const ERROR_TYPE = 'error.type';

/** Hisho's own attributes. */
export const HISHO = {
  /** The model call's cost in USD, from the token counts and the price list (`brain/pricing.ts`). */
  costUsd: 'hisho.llm.cost_usd',
  /** Why the brain called the model (`decide`, `step_2`, `critique`, `summary`, …). */
  purpose: 'hisho.llm.purpose',
  turnId: 'hisho.turn.id',
  workItemId: 'hisho.work_item.id',
  attempt: 'hisho.work_item.attempt',
  platform: 'hisho.platform',
  /** The turn's decision (`reply`, `executed`, `confirm`, `blocked`, …) and its reason code. */
  decision: 'hisho.decision',
  reasonCode: 'hisho.reason_code',
  /** The Guardian's verdict on a proposal (ALLOW, MODIFY, CONFIRM, BLOCK) and its reason code. */
  guardianVerdict: 'hisho.guardian.verdict',
  guardianReasonCode: 'hisho.guardian.reason_code',
  /** The AuthorizationGate's decision (ALLOWED, CONFIRM, DENIED) and its reason code. */
  gateDecision: 'hisho.gate.decision',
  gateReasonCode: 'hisho.gate.reason_code',
  /** What became of the call: ok, shadow, clarify, invalid_input, internal_error, …; absent when it did not run. */
  toolStatus: 'hisho.tool.status',
  /** The step of the proposal loop that proposed the call. */
  toolStep: 'hisho.tool.step',
  /** A step of a turn's list (`core/steps.ts`). */
  stepName: 'hisho.step.name',
  /** A link from an answer to the turn whose question it answers. */
  linkReason: 'hisho.link.reason',
  pendingActionId: 'hisho.pending_action.id',
  /** A notice's kind (reminder, deadline_reminder, daily_digest, …) and what became of it (sent, blocked, …). */
  noticeKind: 'hisho.notice.kind',
  noticeOutcome: 'hisho.notice.outcome',
  /** A background item's kind (background_work, conversation_summary, self_critique). */
  workKind: 'hisho.work.kind',
} as const;

/** The span names: `invoke_agent Hisho`, `chat <model>`, `execute_tool <tool>`, `step <name>`. */
export const spanName = {
  invokeAgent: () => `${GEN_AI_OPERATION.invokeAgent} ${GEN_AI_AGENT}`,
  chat: (model: string) => `${GEN_AI_OPERATION.chat} ${model}`,
  executeTool: (tool: string) => `${GEN_AI_OPERATION.executeTool} ${tool}`,
} as const;
