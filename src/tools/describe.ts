/**
 * Stating what a call will do (issue 7 point 3): the confirmation question is built from the validated
 * parameters — persons by their directory names, absolute dates in the organisation's time zone, counts —
 * and a changed call is shown as a diff of those facts (「期限: 11/24（火） → 11/27（金）」). Pure.
 */
import { zonedParts } from '../core/zoned-time';
import type { EffectDescription, EffectFact } from './types';

const WEEKDAYS_JA = ['月', '火', '水', '木', '金', '土', '日'];
const WEEKDAYS_EN = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const MONTHS_EN = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number): string => String(n).padStart(2, '0');

/**
 * An instant as people read it, in the organisation's time zone: 「11/27（金）」 or 「11/27（金）15:00」
 * ("Fri, Nov 27" / "Fri, Nov 27 15:00"); the year is added when it is not the current one.
 */
export function formatWhen(at: Date, o: { timezone: string; lang: 'ja' | 'en'; now: Date; dateOnly: boolean }): string {
  const p = zonedParts(at, o.timezone);
  const thisYear = zonedParts(o.now, o.timezone).y === p.y;
  const time = o.dateOnly ? '' : ` ${pad(p.hh)}:${pad(p.mm)}`;
  if (o.lang === 'en') {
    return `${WEEKDAYS_EN[p.weekday]}, ${MONTHS_EN[p.m - 1]} ${p.d}${thisYear ? '' : ` ${p.y}`}${time}`;
  }
  return `${thisYear ? '' : `${p.y}/`}${p.m}/${p.d}（${WEEKDAYS_JA[p.weekday]}）${time.trim()}`;
}

/** A parameter value on one line (lists joined, objects as JSON, long text shortened). */
export function showValue(v: unknown, max = 200): string {
  const text = Array.isArray(v)
    ? v.map((x) => showValue(x, max)).join('、')
    : v !== null && typeof v === 'object'
      ? JSON.stringify(v)
      : String(v);
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The fallback for a tool that declares no `describe`: its name and its validated parameters. */
export function genericEffect(toolName: string, params: Record<string, unknown>, lang: 'ja' | 'en'): EffectDescription {
  const facts = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([key, v]) => ({ key, label: key, value: showValue(v) }));
  const en = lang === 'en';
  return {
    summary: en ? `Run "${toolName}".` : `「${toolName}」を実行します。`,
    done: en ? `Ran "${toolName}".` : `「${toolName}」を実行しました。`,
    facts,
  };
}

/** The summary and one line per fact (「・期限: 11/27（金）」). */
export function renderEffect(effect: EffectDescription): string {
  return [effect.summary, ...effect.facts.map((f) => `・${f.label}: ${f.value}`)].join('\n');
}

/**
 * What changed between two versions of the same call, one line per fact that differs (added, removed
 * or changed), by fact key: 「期限: 11/24（火） → 11/27（金）」.
 */
export function diffEffects(before: EffectDescription, after: EffectDescription, lang: 'ja' | 'en'): string[] {
  const none = lang === 'en' ? '(none)' : '（なし）';
  const lines: string[] = [];
  const old = new Map(before.facts.map((f) => [f.key, f]));
  const seen = new Set<string>();
  for (const f of after.facts) {
    seen.add(f.key);
    const was = old.get(f.key);
    if (was?.value !== f.value) lines.push(`${f.label}: ${was?.value ?? none} → ${f.value}`);
  }
  for (const f of before.facts) if (!seen.has(f.key)) lines.push(`${f.label}: ${f.value} → ${none}`);
  return lines;
}

/** True when `v` looks like a stored {@link EffectDescription} (pending actions keep one). */
export function isEffectDescription(v: unknown): v is EffectDescription {
  const e = v as Partial<EffectDescription> | null;
  return (
    !!e &&
    typeof e === 'object' &&
    typeof e.summary === 'string' &&
    Array.isArray(e.facts) &&
    e.facts.every(
      (f: Partial<EffectFact>) =>
        typeof f?.key === 'string' && typeof f.label === 'string' && typeof f.value === 'string',
    )
  );
}
