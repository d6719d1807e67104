/**
 * Priority 7 fixes, computed before the priority 6–7 checks so that they see normalised values:
 * trimming, sender aliases (「自分」 → the asker's member id) and relative dates (「明日」 → 2026-11-23).
 * Never mutates its input.
 */
import type { ToolMeta } from '../core/tool-meta';
import { isSenderAlias, paramsWithRole, parseAmount, personParams } from './param-values';
import { resolveDate } from './resolve-date';
import { formatZonedDateTime, parseYMD } from '../core/zoned-time';
import { dayOffNoteJa, NATIONAL_CALENDAR, nonBusinessReason, type BusinessCalendar } from '../core/business-calendar';

/** Outcome of {@link normaliseParameters}. */
export interface Normalisation {
  /** The parameters after every possible fix (a copy). */
  params: Record<string, unknown>;
  /** True when `params` differs from the input. */
  changed: boolean;
  /** English notes on what was changed, e.g. `due: "明日" -> "2026-11-23"`. */
  changes: string[];
  /** Values that could not be interpreted (→ CONFIRM G_PARAM_UNFIXABLE). */
  unfixable: { param: string; why: string }[];
  /**
   * The organisation-local date of every date-role value that could be read; `dayOffJa` when it is not a
   * business day (「11/28は土曜日です」): the date stays as asked, a confirmation mentions it.
   */
  dates: { param: string; date: string; dayOffJa?: string }[];
}

/** What the fixes need to know about the turn. */
export interface NormaliseContext {
  senderMemberId?: string;
  now: Date;
  timezone: string;
  /** The organisation's business calendar (closing days); absent → national holidays and weekends. */
  calendar?: BusinessCalendar;
}

const ISO_FORM = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** Copy with every string (at any depth) trimmed. */
export function trimDeep(value: unknown): unknown {
  if (typeof value === 'string') return value.trim();
  if (Array.isArray(value)) return value.map(trimDeep);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, trimDeep(v)]));
  }
  return value;
}

function show(v: unknown): string {
  return JSON.stringify(v) ?? String(v);
}

/**
 * Applies every fix the tool's `paramRoles` allow and reports what could not be fixed.
 * Sender aliases without a known `senderMemberId` and unreadable dates/amounts are unfixable.
 */
export function normaliseParameters(
  input: Record<string, unknown>,
  tool: Pick<ToolMeta, 'paramRoles'>,
  ctx: NormaliseContext,
): Normalisation {
  const params = trimDeep(input) as Record<string, unknown>;
  const out: Normalisation = { params, changed: false, changes: [], unfixable: [], dates: [] };
  for (const [name, v] of Object.entries(input)) {
    if (show(v) !== show(params[name])) out.changes.push(`${name}: trimmed`);
  }

  const toSender = (name: string, v: unknown): unknown => {
    if (!isSenderAlias(v)) return v;
    if (ctx.senderMemberId === undefined) {
      out.unfixable.push({ param: name, why: `sender alias ${show(v)} but the sender is unknown` });
      return v;
    }
    out.changes.push(`${name}: ${show(v)} -> sender ${ctx.senderMemberId}`);
    return ctx.senderMemberId;
  };

  for (const name of personParams(tool)) {
    if (name in params) params[name] = toSender(name, params[name]);
  }
  for (const name of paramsWithRole(tool, 'recipients')) {
    if (!(name in params)) continue;
    const v = params[name];
    params[name] = Array.isArray(v) ? v.map((item) => toSender(name, item)) : toSender(name, v);
  }

  for (const name of paramsWithRole(tool, 'date')) {
    const v = params[name];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string') {
      out.unfixable.push({ param: name, why: `date is not a string: ${show(v)}` });
      continue;
    }
    const calendar = ctx.calendar ?? NATIONAL_CALENDAR;
    const r = resolveDate(v, ctx.now, ctx.timezone, calendar);
    if (!r.ok) {
      out.unfixable.push({ param: name, why: `cannot read date ${show(v)}` });
      continue;
    }
    const ymd = parseYMD(r.date);
    const dayOff = ymd && nonBusinessReason(ymd, calendar);
    out.dates.push({ param: name, date: r.date, ...(ymd && dayOff ? { dayOffJa: dayOffNoteJa(ymd, dayOff) } : {}) });
    if (ISO_FORM.test(v)) continue;
    const fixed = r.time && ymd ? formatZonedDateTime(ymd, r.time, ctx.timezone) : r.date;
    params[name] = fixed;
    out.changes.push(`${name}: ${show(v)} -> ${show(fixed)}`);
  }

  for (const name of paramsWithRole(tool, 'amount')) {
    if (Number.isNaN(parseAmount(params[name]))) {
      out.unfixable.push({ param: name, why: `cannot read amount ${show(params[name])}` });
    }
  }

  out.changed = show(params) !== show(input);
  return out;
}
