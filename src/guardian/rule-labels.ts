/**
 * Japanese labels of the Guardian's rules by name, for operator screens: each label is declared beside
 * its rule (`Rule.label`); this collects the fixed tables. Policy rules (`policy:<id>`) are named per
 * organisation and labelled 「社内ルール」.
 */
import { META_CONFIDENCE_RULES } from './check-reply';
import type { Rule } from './engine';
import { CONFIDENCE_RULES, CONSTITUTION_RULES, DANGEROUS_RULES, SECURITY_RULES, TOOL_RULES } from './rules-core';
import { APPROVAL_MODE_RULES, CONSISTENCY_RULES, PARAMETER_RULES } from './rules-params';

const TABLES: readonly (readonly Rule<never>[])[] = [
  TOOL_RULES,
  CONSTITUTION_RULES,
  SECURITY_RULES,
  DANGEROUS_RULES,
  CONFIDENCE_RULES,
  PARAMETER_RULES,
  CONSISTENCY_RULES,
  APPROVAL_MODE_RULES,
  META_CONFIDENCE_RULES,
];

/** Every fixed rule's name → its Japanese label. */
export const RULE_LABELS: Readonly<Record<string, string>> = Object.fromEntries(
  TABLES.flatMap((t) => t.map((r) => [r.name, r.label] as const)),
);

/** The label of a traced rule name (a policy rule: 「社内ルール」; an unknown name: 「その他の確認」). */
export function ruleLabel(name: string): string {
  if (name.startsWith('policy:')) return '社内ルール';
  return RULE_LABELS[name] ?? 'その他の確認';
}
