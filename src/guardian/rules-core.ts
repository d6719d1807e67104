/**
 * Rule tables for priorities 0–5: tool existence, constitution, security, dangerous operations,
 * organisation policies and confidence (SPEC §3.5; seed 003 §4.7, §5.3.3b).
 */
import { reasoningText, type Confidence, type Reasoning, type ToolProposal } from '../core/proposal';
import type { ToolMeta } from '../core/tool-meta';
import {
  MEMORY_STORE_EFFECT,
  PERMISSION_CLAIM_PATTERNS,
  topicOf,
  PERSONAL_IDENTIFIER_PATTERNS,
  type GuardianConfig,
  type GuardianPolicy,
} from './config';
import type { Rule, RuleHit } from './engine';
import type { Normalisation } from './normalise-params';
import type { ReasonCodeOf } from './verdict';
import { findPattern, findWord } from './text-scan';

/** Everything the proposal rules (priority ≥ 1) read. */
export interface ProposalRuleContext {
  proposal: ToolProposal;
  tool: ToolMeta;
  reasoning: Reasoning | null;
  confidence: Confidence | null;
  config: GuardianConfig;
  /** Every string in the proposed parameters (keys included), for the deep scans. */
  texts: string[];
  /** Parameters the priority 6–7 checks read: normalised unless the fix rule is shadowed. */
  params: Record<string, unknown>;
  norm: Normalisation;
  /** Today in the organisation time zone (`YYYY-MM-DD`); undefined when the zone is unknown. */
  today: string | undefined;
  /** Members in the room, when known (quoted in the 「全員」 note). */
  roomMemberCount?: number;
  /** Whether the call names anyone besides the sender (see GuardianTurnContext). */
  namesOthers: boolean;
  /** Confidential topics that are the sender's work. */
  senderHandles: readonly string[];
}

/** Minimum reasoning length in characters (R-C3). */
export const MIN_REASONING_CHARS = 20;

const block = (
  code: Exclude<ReasonCodeOf<'BLOCK'>, 'G_POLICY_BLOCK'>,
  reason: string,
  userNoteJa: string,
): RuleHit => ({
  action: 'BLOCK',
  reasonCode: code,
  reason,
  userNoteJa,
});
const confirm = (
  code: Exclude<ReasonCodeOf<'CONFIRM'>, 'G_POLICY_CONFIRM'>,
  type: 'single' | 'double',
  reason: string,
  userNoteJa: string,
): RuleHit => ({ action: 'CONFIRM', reasonCode: code, confirmationType: type, reason, userNoteJa });

/** Priority 0: the tool must exist and be enabled. Never shadowable. */
export const TOOL_RULES: readonly Rule<{ toolName: string; tool: ToolMeta | undefined }>[] = [
  {
    name: 'tool.unknown',
    label: '登録済みの機能か',
    priority: 0,
    shadowable: false,
    check: (c) =>
      c.tool ? null : block('G_UNKNOWN_TOOL', `unknown tool "${c.toolName}"`, 'その操作には対応していません'),
  },
  {
    name: 'tool.disabled',
    label: '機能が停止中でないか',
    priority: 0,
    shadowable: false,
    check: (c) =>
      !c.tool || c.tool.enabled
        ? null
        : block('G_TOOL_DISABLED', `tool "${c.toolName}" is disabled`, 'この機能は現在停止中です'),
  },
];

const CONSTITUTION_NOTE = '判断の根拠に問題があったため実行を中止しました';

/** Priority 1: reasoning present, long enough, and free of permission claims (seed 003 §4.7). */
export const CONSTITUTION_RULES: readonly Rule<{ reasoning: Reasoning | null }>[] = [
  {
    name: 'constitution.reasoning_present',
    label: '判断の根拠があるか',
    priority: 1,
    check: (c) =>
      c.reasoning ? null : block('G_CONSTITUTION_NO_REASONING', 'brain output carries no reasoning', CONSTITUTION_NOTE),
  },
  {
    name: 'constitution.reasoning_length',
    label: '判断の根拠の長さ',
    priority: 1,
    check: (c) => {
      const len = [...reasoningText(c.reasoning).trim()].length;
      return len >= MIN_REASONING_CHARS
        ? null
        : block(
            'G_CONSTITUTION_SHORT_REASONING',
            `reasoning has ${len} characters (< ${MIN_REASONING_CHARS})`,
            CONSTITUTION_NOTE,
          );
    },
  },
  {
    name: 'constitution.permission_claim',
    label: '権限を自己判断していないか',
    priority: 1,
    check: (c) => {
      const p = findPattern([reasoningText(c.reasoning)], PERMISSION_CLAIM_PATTERNS);
      return p
        ? block(
            'G_CONSTITUTION_PERMISSION_CLAIM',
            `reasoning asserts a permission decision (${p.source})`,
            CONSTITUTION_NOTE,
          )
        : null;
    },
  },
];

/** Priority 2: secret-like values and confidential words anywhere in the parameters. */
export const SECURITY_RULES: readonly Rule<ProposalRuleContext>[] = [
  {
    name: 'security.ng_pattern',
    label: '秘密情報（パスワード・マイナンバー等）',
    priority: 2,
    check: (c) => {
      const p = findPattern(c.texts, c.config.ngPatterns);
      return p
        ? block(
            'G_NG_PATTERN',
            `parameters match NG pattern ${p.source}`,
            '秘密情報（パスワード等）が含まれるため実行できません',
          )
        : null;
    },
  },
  {
    name: 'security.confidential',
    label: '機密情報（他人の給与・評価等）',
    priority: 2,
    check: (c) => {
      const w = confidentialWordNotAllowed(c);
      return w
        ? block(
            'G_CONFIDENTIAL',
            `parameters contain confidential word "${w}" (${callKind(c.tool)} call, ` +
              `${c.namesOthers ? 'naming others' : 'the sender only'})`,
            '機密情報に関わる内容のため実行できません',
          )
        : null;
    },
  },
  {
    name: 'security.personal_identifier_memory',
    label: '記憶に個人識別情報を残さない',
    priority: 2,
    check: (c) => {
      if (!c.tool.effects.includes(MEMORY_STORE_EFFECT)) return null;
      const p = findPattern(c.texts, PERSONAL_IDENTIFIER_PATTERNS);
      return p
        ? block(
            'G_PERSONAL_IDENTIFIER',
            `a memory would keep a personal identifier or health detail (${p.source.slice(0, 40)})`,
            'マイナンバー・口座番号・カード番号・パスポート・健康に関する情報は記憶できません',
          )
        : null;
    },
  },
];

/** Effects of the calls that keep a work item (a task, reminder, schedule or goal) for people. */
export const WORK_ITEM_EFFECTS: ReadonlySet<string> = new Set([
  'db.task_create',
  'db.task_update',
  'chatwork.task_create',
  'chatwork.task_update',
  'db.reminder_create',
  'db.reminder_update',
  'db.schedule_create',
  'db.schedule_update',
  'db.goal_create',
  'db.goal_update',
]);

/** What a call does with the words in it, for {@link CONFIDENTIAL_TABLE}. */
export type CallKind = 'work_item' | 'disclosure';

/** A call's kind from its declared effects: keeping a work item, or anything that reads, stores or posts words. */
export function callKind(tool: Pick<ToolMeta, 'effects'>): CallKind {
  return tool.effects.length > 0 && tool.effects.every((e) => WORK_ITEM_EFFECTS.has(e)) ? 'work_item' : 'disclosure';
}

/**
 * Confidentiality protects data, not topics (issue 40): a confidential word (pay, evaluation, personnel, deals)
 * in a call is allowed (`allow`), allowed only when the topic is the sender's department's work (`handlers`, the
 * directory's `handles:`), or blocked (`block`), by what the call does and whether it names anyone besides the
 * sender. A member's own reminder 「給与振込データの送信」 passes, and the payroll department may give that work to a
 * colleague; reading, storing or posting words on the topic about others (someone's pay, an evaluation sent to a
 * colleague) is blocked, whoever asks.
 */
export const CONFIDENTIAL_TABLE: Readonly<Record<CallKind, { self: Outcome; others: Outcome }>> = {
  work_item: { self: 'allow', others: 'handlers' },
  disclosure: { self: 'handlers', others: 'block' },
};
type Outcome = 'allow' | 'handlers' | 'block';

/** The first confidential word of the call that the table does not allow here, or undefined. */
function confidentialWordNotAllowed(c: ProposalRuleContext): string | undefined {
  const outcome = CONFIDENTIAL_TABLE[callKind(c.tool)][c.namesOthers ? 'others' : 'self'];
  if (outcome === 'allow') return undefined;
  const words = c.config.confidentialWords.filter((w) => findWord(c.texts, [w]) !== undefined);
  if (outcome === 'block') return words[0];
  return words.find((w) => {
    const topic = topicOf(w);
    return topic === undefined || !c.senderHandles.includes(topic);
  });
}

/** Priority 3: risk and `requiresConfirmation` from the tool declaration. */
export const DANGEROUS_RULES: readonly Rule<ProposalRuleContext>[] = [
  {
    name: 'dangerous.risk',
    label: '操作の危険度',
    priority: 3,
    check: ({ tool }) => {
      switch (tool.risk) {
        case 'critical':
          return block(
            'G_DANGEROUS_CRITICAL',
            `tool "${tool.name}" is risk critical`,
            'この操作は自動では実行できません',
          );
        case 'high':
          return confirm(
            'G_DANGEROUS_HIGH',
            'double',
            `tool "${tool.name}" is risk high`,
            '影響の大きい操作です（二重確認）',
          );
        case 'medium':
          return confirm('G_DANGEROUS_MEDIUM', 'single', `tool "${tool.name}" is risk medium`, '変更を伴う操作です');
        default:
          return null;
      }
    },
  },
  {
    name: 'dangerous.requires_confirmation',
    label: '常に確認が必要な操作',
    priority: 3,
    check: ({ tool }) =>
      tool.requiresConfirmation
        ? confirm(
            'G_TOOL_REQUIRES_CONFIRMATION',
            'single',
            `tool "${tool.name}" requires confirmation`,
            '実行前に確認が必要な操作です',
          )
        : null,
  },
];

/** Priority 4: one rule per organisation policy, named `policy:<id>`. */
export function policyRules(policies: readonly GuardianPolicy[]): Rule<ProposalRuleContext>[] {
  return policies.map((p) => ({
    name: `policy:${p.id}`,
    label: `社内ルール「${p.title}」`,
    priority: 4,
    ...(p.rule.shadow ? { shadow: true } : {}),
    check: (c: ProposalRuleContext): RuleHit | null => {
      if (!p.rule.tools.includes('*') && !p.rule.tools.includes(c.tool.name)) return null;
      const keywords = p.rule.keywords ?? [];
      const hitWord = keywords.length > 0 ? findWord(c.texts, keywords) : undefined;
      if (keywords.length > 0 && hitWord === undefined) return null;
      const why = `policy ${p.id} "${p.title}"${hitWord ? ` (keyword "${hitWord}")` : ''}`;
      return p.rule.action === 'block'
        ? {
            action: 'BLOCK',
            reasonCode: 'G_POLICY_BLOCK',
            reason: `${why} forbids this call`,
            userNoteJa: `社内ルール「${p.title}」により実行できません`,
            policyId: p.id,
          }
        : {
            action: 'CONFIRM',
            reasonCode: 'G_POLICY_CONFIRM',
            confirmationType: 'single',
            reason: `${why} may apply`,
            userNoteJa: `社内ルール「${p.title}」に関わる操作です`,
            policyId: p.id,
          };
    },
  }));
}

/** Overall confidence; missing or not a number counts as 0 (fail-closed). */
export function overallConfidence(confidence: Confidence | null | undefined): number {
  const v = confidence?.overall;
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** Priority 5: confidence thresholds 0.3 / 0.5 / 0.7. */
export const CONFIDENCE_RULES: readonly Rule<ProposalRuleContext>[] = [
  {
    name: 'confidence',
    label: '確信度',
    priority: 5,
    check: (c) => {
      const v = overallConfidence(c.confidence);
      if (v < 0.3) return block('G_CONFIDENCE_VERY_LOW', `confidence ${v} < 0.3`, 'ご依頼の内容を理解できませんでした');
      if (v < 0.5)
        return confirm('G_CONFIDENCE_LOW', 'single', `confidence ${v} < 0.5`, 'ご依頼の意図を確認させてください');
      if (v < 0.7)
        return confirm('G_CONFIDENCE_MEDIUM', 'single', `confidence ${v} < 0.7`, '念のため内容を確認させてください');
      return null;
    },
  },
];
