/** Shared fixtures for the Guardian tests: a fixed clock (Sunday 2026-11-22 10:00 JST) and builders. */
import type { Confidence, Reasoning } from '../../src/core/proposal';
import type { ToolMeta } from '../../src/core/tool-meta';
import {
  defaultGuardianConfig,
  evaluateProposal,
  type EvaluateProposalInput,
  type GuardianConfig,
  type GuardianPolicy,
  type GuardianTurnContext,
  type GuardianVerdict,
} from '../../src/guardian';

export const NOW = new Date('2026-11-22T10:00:00+09:00');
export const TZ = 'Asia/Tokyo';
export const SENDER = 'm-42';

export const GOOD_REASONING: Reasoning = {
  intent_understanding: '田中さんに資料作成のタスクを明日までに依頼したいという意図です',
  tool_selection_reason: 'タスクを作成するツールが最も適切なため',
};

/** A task-creating tool with every parameter role the rules understand. */
export function makeTool(over: Partial<ToolMeta> = {}): ToolMeta {
  return {
    name: 'task_create',
    effects: ['chatwork.task_create'],
    risk: 'none',
    requiredLevel: 2,
    requiresConfirmation: false,
    enabled: true,
    paramRoles: {
      assignees: 'recipients',
      due: 'date',
      body: 'text',
      amount: 'amount',
      ids: 'deletion',
      person: 'person',
      target: 'target_user',
    },
    ...over,
  };
}

/** Overrides for one evaluation; everything not given is a harmless default. */
export interface Case {
  params?: Record<string, unknown>;
  tool?: Partial<ToolMeta> | null;
  reasoning?: Reasoning | null;
  confidence?: Confidence | null;
  policies?: GuardianPolicy[];
  config?: Partial<GuardianConfig>;
  context?: Partial<GuardianTurnContext>;
}

/** Builds the full input for {@link evaluateProposal}. */
export function makeInput(c: Case = {}): EvaluateProposalInput {
  const tool = c.tool === null ? undefined : makeTool(c.tool ?? {});
  return {
    proposal: { id: 'toolu_1', toolName: tool?.name ?? 'no_such_tool', parameters: c.params ?? { body: '資料作成' } },
    tool,
    reasoning: c.reasoning === undefined ? GOOD_REASONING : c.reasoning,
    confidence: c.confidence === undefined ? { overall: 0.9 } : c.confidence,
    policies: c.policies ?? [],
    config: { ...defaultGuardianConfig(), ...(c.config ?? {}) },
    context: {
      senderMemberId: SENDER,
      senderName: '山田',
      roomMemberCount: 25,
      now: NOW,
      timezone: TZ,
      ...(c.context ?? {}),
    },
  };
}

/** Evaluates one case. */
export function evaluate(c: Case = {}): GuardianVerdict {
  return evaluateProposal(makeInput(c));
}

/** `n` distinct member ids. */
export function members(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `m-${100 + i}`);
}

export const policy = (
  id: string,
  action: 'confirm' | 'block',
  tools: string[] = ['*'],
  extra: Partial<GuardianPolicy['rule']> = {},
): GuardianPolicy => ({
  id,
  title: id === 'p-expense' ? '経費は部長承認' : `ルール${id}`,
  rule: { tools, action, ...extra },
});
