/**
 * Output checks: the final text the bot will post (SPEC §3.5 priority 2, "reply text only after
 * Guardian output checks") and the constitution check for text / clarification brain outputs.
 */
import type { Confidence, Reasoning } from '../core/proposal';
import type { GuardianConfig } from './config';
import { runRules, verdictFromHit, type Rule } from './engine';
import { CONSTITUTION_RULES } from './rules-core';
import { findPattern, findWord } from './text-scan';
import type { GuardianVerdict, RuleTrace } from './verdict';

/** Result of {@link checkReplyText}. */
export interface ReplyCheckResult {
  action: 'ALLOW' | 'BLOCK' | 'MODIFY';
  reasonCode: 'G_REPLY_OK' | 'G_REPLY_MARKUP_NEUTRALISED' | 'G_CONFIDENTIAL' | 'G_NG_PATTERN';
  /** The text to post: neutralised on MODIFY, unchanged otherwise (never post it on BLOCK). */
  text: string;
  /** English, internal. */
  reason: string;
}

const ZWSP = '\u200b';

/** Markup that would notify people; each entry turns it into inert text. */
const MARKUP_RULES: readonly [RegExp, (match: string, inner: string) => string][] = [
  // ChatWork: [toall], [To:123], [rp aid=123 to=456-789] → full-width brackets
  [/\[(toall|to:\s*\d+|rp\s+aid=[^\]]*)\]/gi, (_, inner) => `［${inner}］`],
  // Discord: @everyone / @here → zero-width space after the @
  [/@(everyone|here)\b/gi, (_, inner) => `@${ZWSP}${inner}`],
  // Discord: <@123>, <@!123>, <@&123> → zero-width space after the @
  [/<@([!&]?\d+)>/g, (_, inner) => `<@${ZWSP}${inner}>`],
];

/** Text with every mass / raw mention neutralised. */
export function neutraliseMentions(text: string): string {
  return MARKUP_RULES.reduce((t, [re, fix]) => t.replace(re, fix), text);
}

/**
 * Checks the text the bot is about to post: NG patterns → BLOCK G_NG_PATTERN; confidential words →
 * BLOCK G_CONFIDENTIAL; ChatWork `[toall]` / `[To:n]` / `[rp aid=n]` or Discord `@everyone` / `@here` /
 * `<@n>` / `<@&n>` → MODIFY G_REPLY_MARKUP_NEUTRALISED (adapters add real mentions themselves);
 * otherwise ALLOW G_REPLY_OK.
 */
export function checkReplyText(
  text: string,
  config: Pick<GuardianConfig, 'ngPatterns' | 'confidentialWords'>,
  quoted: readonly string[] = [],
): ReplyCheckResult {
  const ng = findPattern([text], config.ngPatterns);
  if (ng) return { action: 'BLOCK', reasonCode: 'G_NG_PATTERN', text, reason: `reply matches NG pattern ${ng.source}` };
  const word = findWord([withoutQuoted(text, quoted)], config.confidentialWords);
  if (word)
    return {
      action: 'BLOCK',
      reasonCode: 'G_CONFIDENTIAL',
      text,
      reason: `reply contains confidential word "${word}"`,
    };
  const neutralised = neutraliseMentions(text);
  if (neutralised !== text) {
    return {
      action: 'MODIFY',
      reasonCode: 'G_REPLY_MARKUP_NEUTRALISED',
      text: neutralised,
      reason: 'mention markup neutralised',
    };
  }
  return { action: 'ALLOW', reasonCode: 'G_REPLY_OK', text, reason: 'reply passed the output checks' };
}

/**
 * The text without the work items it quotes (issue 40): the title of a reminder or task the Guardian let through
 * (「給与振込データの送信」) may be said back word for word; anything else is scanned as written. Longest first, so a
 * title is taken out whole before a shorter one inside it.
 */
function withoutQuoted(text: string, quoted: readonly string[]): string {
  const norm = (s: string) => s.normalize('NFKC');
  let out = norm(text);
  for (const q of [...quoted].map(norm).sort((a, b) => b.length - a.length)) {
    if (q.trim().length >= 2) out = out.split(q).join('\u0000');
  }
  return out;
}

/** R-C3: a brain output must carry a readable confidence; the value itself does not gate a reply. */
export const META_CONFIDENCE_RULES: readonly Rule<{ confidence: Confidence | null }>[] = [
  {
    name: 'confidence.present',
    label: '確信度の記載',
    priority: 5,
    check: ({ confidence }) => {
      const v = confidence?.overall;
      return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1
        ? null
        : {
            action: 'BLOCK',
            reasonCode: 'G_CONFIDENCE_VERY_LOW',
            reason: 'confidence missing or outside 0..1',
            userNoteJa: 'ご依頼の内容を理解できませんでした',
          };
    },
  },
];

/**
 * Priority 1 (constitution) for text and clarification outputs: reasoning present, ≥ 20 characters,
 * no permission claims; plus a confidence in 0..1 must be present. ALLOW G_OK or BLOCK with the
 * constitution code. `config.shadowRules` applies as for proposals.
 */
export function checkBrainOutputMeta(
  reasoning: Reasoning | null,
  confidence: Confidence | null,
  config?: Pick<GuardianConfig, 'shadowRules'>,
): GuardianVerdict {
  const trace: RuleTrace[] = [];
  const shadow = config?.shadowRules ?? [];
  const c1 = runRules(CONSTITUTION_RULES, { reasoning }, shadow, trace);
  if (c1.decided) return verdictFromHit(c1.decided, trace);
  const c5 = runRules(META_CONFIDENCE_RULES, { confidence }, shadow, trace);
  if (c5.decided) return verdictFromHit(c5.decided, trace);
  return { action: 'ALLOW', reasonCode: 'G_OK', reason: 'brain output meta passed', trace };
}
