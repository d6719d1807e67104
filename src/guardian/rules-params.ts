/**
 * Rule tables for priorities 6–8: parameters by role (amount, recipients, deletion), consistency
 * (unfixable values, date range, fixes) and the strict approval mode (SPEC §3.5, R-G2).
 */
import { hasEffects } from '../core/tool-meta';
import type { Rule, RuleHit } from './engine';
import {
  countDeletions,
  countRecipients,
  groupDigits,
  paramsWithRole,
  parseAmount,
  type RecipientCount,
} from './param-values';
import type { ProposalRuleContext } from './rules-core';
import type { ReasonCodeOf } from './verdict';
import { daysBetween, parseYMD } from '../core/zoned-time';

/** Thresholds of priority 6–7 (yen, people, days). */
export const PARAM_LIMITS = {
  amountHigh: 100_000,
  amountVeryHigh: 1_000_000,
  recipientsMany: 3,
  recipientsMass: 10,
  maxDaysAhead: 365,
} as const;

const confirm = (
  code: Exclude<ReasonCodeOf<'CONFIRM'>, 'G_POLICY_CONFIRM'>,
  type: 'single' | 'double',
  reason: string,
  userNoteJa: string,
): RuleHit => ({ action: 'CONFIRM', reasonCode: code, confirmationType: type, reason, userNoteJa });

/** Combined count over every parameter with the role (any "all" wins). */
function totalCount(c: ProposalRuleContext, role: 'recipients' | 'deletion'): RecipientCount {
  const read = role === 'recipients' ? countRecipients : countDeletions;
  return paramsWithRole(c.tool, role).reduce<RecipientCount>(
    (acc, name) => {
      const r = read(c.params[name]);
      return { all: acc.all || r.all, count: acc.count + r.count };
    },
    { all: false, count: 0 },
  );
}

/** Priority 6: amounts, recipients and deletions by `tool.paramRoles`. */
export const PARAMETER_RULES: readonly Rule<ProposalRuleContext>[] = [
  {
    name: 'param.amount',
    label: '金額',
    priority: 6,
    check: (c) => {
      const amounts = paramsWithRole(c.tool, 'amount')
        .map((n) => parseAmount(c.params[n]))
        .filter((v): v is number => v !== undefined && Number.isFinite(v));
      const max = Math.max(0, ...amounts);
      if (max > PARAM_LIMITS.amountVeryHigh) {
        return confirm(
          'G_AMOUNT_VERY_HIGH',
          'double',
          `amount ${max} > ${PARAM_LIMITS.amountVeryHigh}`,
          `${groupDigits(max)}円の高額な操作です（二重確認）`,
        );
      }
      if (max > PARAM_LIMITS.amountHigh) {
        return confirm(
          'G_AMOUNT_HIGH',
          'single',
          `amount ${max} > ${PARAM_LIMITS.amountHigh}`,
          `${groupDigits(max)}円の操作です`,
        );
      }
      return null;
    },
  },
  {
    name: 'param.recipients',
    label: '宛先の人数',
    priority: 6,
    check: (c) => {
      const { all, count } = totalCount(c, 'recipients');
      if (all) {
        const n = c.roomMemberCount !== undefined ? `（${c.roomMemberCount}人）` : '';
        return confirm('G_RECIPIENTS_ALL', 'double', 'recipients include everyone', `全員${n}に送ります（二重確認）`);
      }
      if (count >= PARAM_LIMITS.recipientsMass) {
        return confirm(
          'G_RECIPIENTS_MASS',
          'double',
          `${count} recipients >= ${PARAM_LIMITS.recipientsMass}`,
          `${count}人に送ります。内容もご確認ください`,
        );
      }
      if (count >= PARAM_LIMITS.recipientsMany) {
        return confirm(
          'G_RECIPIENTS_MANY',
          'single',
          `${count} recipients >= ${PARAM_LIMITS.recipientsMany}`,
          `${count}人に送ります`,
        );
      }
      return null;
    },
  },
  {
    name: 'param.deletion',
    label: '削除',
    priority: 6,
    check: (c) => {
      const { all, count } = totalCount(c, 'deletion');
      if (all) return confirm('G_DELETE_BULK', 'double', 'deletes every item', '全件を削除します（二重確認）');
      if (count > 1) return confirm('G_DELETE_BULK', 'single', `deletes ${count} items`, `${count}件を削除します`);
      if (count === 1) return confirm('G_DELETE', 'single', 'deletes 1 item', '1件を削除します');
      return null;
    },
  },
];

/** Priority 7: unfixable values, dates out of range, and the fixes themselves (MODIFY). */
export const CONSISTENCY_RULES: readonly Rule<ProposalRuleContext>[] = [
  {
    name: 'consistency.unfixable',
    label: '解釈できない値',
    priority: 7,
    check: ({ norm }) => {
      const first = norm.unfixable[0];
      if (!first) return null;
      const reason = norm.unfixable.map((u) => `${u.param}: ${u.why}`).join('; ');
      return confirm('G_PARAM_UNFIXABLE', 'single', reason, `「${first.param}」の値を確認させてください`);
    },
  },
  {
    name: 'consistency.date_range',
    label: '日付の範囲（過去・1年以上先）',
    priority: 7,
    check: ({ norm, today }) => {
      const base = today ? parseYMD(today) : undefined;
      if (!base) return null;
      for (const { param, date } of norm.dates) {
        const ymd = parseYMD(date);
        if (!ymd) continue;
        const ahead = daysBetween(base, ymd);
        if (ahead < 0)
          return confirm(
            'G_DATE_PAST',
            'single',
            `${param} ${date} is before today ${today}`,
            `${date}は過去の日付です`,
          );
        if (ahead > PARAM_LIMITS.maxDaysAhead) {
          return confirm(
            'G_DATE_FAR_FUTURE',
            'single',
            `${param} ${date} is ${ahead} days ahead`,
            `${date}はかなり先の日付です`,
          );
        }
      }
      return null;
    },
  },
  {
    name: 'consistency.fix',
    label: '値の整形（空白・日付）',
    priority: 7,
    check: ({ norm }) =>
      norm.changed
        ? { action: 'MODIFY', reasonCode: 'G_PARAM_FIXED', reason: `normalised: ${norm.changes.join('; ')}` }
        : null,
  },
];

/** Priority 8 (R-G2): strict mode confirms every tool with effects unless auto-approved. */
export const APPROVAL_MODE_RULES: readonly Rule<ProposalRuleContext>[] = [
  {
    name: 'approval.strict',
    label: '厳格モード（すべて確認）',
    priority: 8,
    check: ({ config, tool }) =>
      config.approvalMode === 'strict' && hasEffects(tool) && !config.autoApprove.includes(tool.name)
        ? confirm(
            'G_STRICT_MODE_CONFIRM',
            'single',
            `strict approval mode and "${tool.name}" has effects`,
            '承認モードが「厳格」のため確認します',
          )
        : null,
  },
];
