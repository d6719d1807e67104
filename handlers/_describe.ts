/**
 * Helpers for the capabilities' `describe`: facts in the person's language and absolute dates in the
 * organisation's time zone (issue 7: the confirmation question states what will run, from the checked call).
 */
import { formatWhen, showValue } from '../src/tools/describe';
import type { DescribeContext, EffectFact } from '../src/tools/types';
import type { ParsedWhen } from './_when';

/** A fact labelled in the person's language. */
export function fact(
  ctx: Pick<DescribeContext, 'lang'>,
  key: string,
  label: { ja: string; en: string },
  value: unknown,
): EffectFact {
  return { key, label: ctx.lang === 'en' ? label.en : label.ja, value: showValue(value) };
}

/** A parsed date as people read it: 「11/27（金）」, 「11/27（金）15:00」 (organisation time zone). */
export function showWhen(
  when: Pick<ParsedWhen, 'at' | 'dateOnly'>,
  ctx: Pick<DescribeContext, 'timezone' | 'lang' | 'now'>,
): string {
  return formatWhen(when.at, { timezone: ctx.timezone, lang: ctx.lang, now: ctx.now(), dateOnly: when.dateOnly });
}

/** 「なし」 / "none". */
export function none(ctx: Pick<DescribeContext, 'lang'>): string {
  return ctx.lang === 'en' ? 'none' : 'なし';
}
