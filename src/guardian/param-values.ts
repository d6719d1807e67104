/**
 * Reading role-tagged parameter values (amounts, recipient lists, deletion ids, sender aliases) the
 * way the rule tiers need them. Pure; never throws.
 */
import type { ParamRole, ToolMeta } from '../core/tool-meta';

/** Words meaning "everyone" in a recipients value. */
export const ALL_RECIPIENT_WORDS: readonly string[] = [
  'all',
  '全員',
  'everyone',
  'みんな',
  '皆',
  '皆さん',
  'toall',
  '@all',
  '@everyone',
];

/** Words meaning "the person asking" in a person / target_user / recipients value. */
export const SENDER_ALIASES: readonly string[] = [
  '自分',
  '私',
  'わたし',
  '僕',
  'ぼく',
  '俺',
  'おれ',
  '自分自身',
  'me',
  'myself',
  'sender',
  'i',
];

const key = (s: string): string => s.normalize('NFKC').trim().toLowerCase();

/** Names of the parameters carrying `role`, in the tool's declaration order. */
export function paramsWithRole(tool: Pick<ToolMeta, 'paramRoles'>, role: ParamRole): string[] {
  return Object.entries(tool.paramRoles ?? {})
    .filter(([, r]) => r === role)
    .map(([name]) => name);
}

/** Roles whose value is one person reference (「自分」 there means the sender). */
const SINGLE_PERSON_ROLES: ReadonlySet<ParamRole> = new Set<ParamRole>([
  'person',
  'target_user',
  'assignee',
  'reminder_target',
  'memory_subject',
]);

/** Names of the parameters holding one person reference, in the tool's declaration order. */
export function personParams(tool: Pick<ToolMeta, 'paramRoles'>): string[] {
  return Object.entries(tool.paramRoles ?? {})
    .filter(([, r]) => SINGLE_PERSON_ROLES.has(r))
    .map(([name]) => name);
}

/** True when a string means the asker (「自分」, "me" …). */
export function isSenderAlias(value: unknown): boolean {
  return typeof value === 'string' && SENDER_ALIASES.includes(key(value));
}

/** True when a string means everyone (「全員」, "all" …). */
export function isAllWord(value: unknown): boolean {
  return typeof value === 'string' && ALL_RECIPIENT_WORDS.includes(key(value));
}

/** Amount parse result: `undefined` = absent, `NaN` = present but unreadable. */
export type AmountValue = number | undefined;

/**
 * Reads an amount in yen: numbers, or strings such as "5,000,000", "¥120,000", "12万円", "1.5億".
 * Negative amounts count by their absolute value. Absent → undefined; unreadable → NaN.
 */
export function parseAmount(value: unknown): AmountValue {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? Math.abs(value) : NaN;
  if (typeof value !== 'string') return NaN;
  const s = value.normalize('NFKC').replace(/[\s,¥￥]|円|yen|jpy/gi, '');
  if (s.length === 0) return undefined;
  const m = /^-?(\d+(?:\.\d+)?)(万|億)?$/.exec(s);
  if (!m) return NaN;
  const unit = m[2] === '億' ? 100_000_000 : m[2] === '万' ? 10_000 : 1;
  return Math.round(Number(m[1]) * unit);
}

/** How many recipients a value names; `all` when it means everyone. */
export interface RecipientCount {
  all: boolean;
  count: number;
}

function listOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value === 'string')
    return value
      .split(/[,、，;；\n]+/)
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
  if (value === undefined || value === null) return [];
  return [value];
}

function identity(v: unknown): string {
  if (typeof v === 'string') return `s:${key(v)}`;
  if (typeof v === 'number') return `s:${v}`;
  try {
    return `j:${JSON.stringify(v)}`;
  } catch {
    return `x:${String(v)}`;
  }
}

/** Counts distinct recipients (a comma-separated string is split); "all"/「全員」 anywhere → all. */
export function countRecipients(value: unknown): RecipientCount {
  const items = listOf(value);
  if (items.some(isAllWord)) return { all: true, count: items.length };
  return { all: false, count: new Set(items.map(identity)).size };
}

/** Deletion target count; `all` when the value means every item. */
export function countDeletions(value: unknown): RecipientCount {
  return countRecipients(value);
}

/** 1,234,567 style grouping (locale-independent). */
export function groupDigits(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
