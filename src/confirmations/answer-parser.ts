/**
 * Parsing a person's answer to a confirmation question (R-S2, R-S4). Pure.
 *
 * Strict by design: only short, exact answers count. Anything unclear is 'other', never approval
 * (seed 003 §5.1.5 fails closed; its substring matching — "1件目" approving — is deliberately not copied).
 */

export { buttonKey, parseButtonKey, type ButtonAnswer } from './button-key';

/** What an answer to "実行してよいですか？ 1. はい 2. いいえ" means. */
export type AnswerClass = 'approve' | 'deny' | 'modify' | 'other';

const APPROVE = new Set([
  'はい',
  'はーい',
  'うん',
  'ok',
  'okay',
  'オッケー',
  'いいよ',
  'いいです',
  'お願い',
  'お願いします',
  'おねがい',
  'おねがいします',
  '実行',
  '実行して',
  '進めて',
  'yes',
  'y',
  'sure',
  '1',
  '👍',
  '承認',
]);

const DENY = new Set([
  'いいえ',
  'いや',
  'no',
  'n',
  'やめ',
  'やめて',
  'やめる',
  'キャンセル',
  'cancel',
  'だめ',
  'ダメ',
  '中止',
  '2',
  '👎',
  '不要',
]);

/** Change words that make any answer a modification request. 何でも/いつでも/… are not "but". */
const CHANGE_ANYWHERE = /(?<![何なんいつ誰だれどこ])でも|ただし|じゃなくて|に変えて|に変更|\binstead\b|\bbut\b/u;

/** After a leading yes/no word, these also ask for a change ("はい、明日にして", "yes, make it Friday"). */
const CHANGE_AFTER_ANSWER = /にして|にしといて|変えて|変更|直して|けど|\bchange\b|\bmake it\b|\bmove it\b|\brather\b/u;

const URGENT = /緊急|今すぐ|ストップ|止めて|とめて|ヘルプ|助けて|\bstop\b|\bhelp\b|\burgent\b/u;

const TRAILING = /[。！!.〜~\s]+$/u;
const SEPARATORS = /[、,，\s]+/u;

/**
 * NFKC, lower case, trimmed, without trailing 。！!.〜~ and without emoji variation selectors or skin
 * tones (so "ＯＫ！", "はい。" and "👍🏻" read as "ok", "はい" and "👍").
 */
export function normalizeAnswer(text: string): string {
  return text
    .normalize('NFKC')
    .replace(/\uFE0E|\uFE0F|[\u{1F3FB}-\u{1F3FF}]/gu, '')
    .toLowerCase()
    .trim()
    .replace(TRAILING, '');
}

function tokens(normalized: string): string[] {
  return normalized
    .split(SEPARATORS)
    .map((t) => t.replace(TRAILING, ''))
    .filter((t) => t.length > 0);
}

function classOf(token: string): 'approve' | 'deny' | null {
  if (APPROVE.has(token)) return 'approve';
  if (DENY.has(token)) return 'deny';
  return null;
}

/**
 * Classifies an answer. 'approve'/'deny' only for an exact word (or several exact words of the same
 * kind: "はい、お願いします"); 'modify' when a change is asked for ("はい、でも明日にして",
 * "yes but make it Friday", "金曜に変更して"); everything else 'other'.
 */
export function classifyAnswer(text: string): AnswerClass {
  const normalized = normalizeAnswer(text);
  if (normalized.length === 0) return 'other';
  const whole = classOf(normalized);
  if (whole) return whole;

  const parts = tokens(normalized);
  const classes = parts.map(classOf);
  const first = classes[0];
  if (first && classes.every((c) => c === first)) return first;

  if (CHANGE_ANYWHERE.test(normalized)) return 'modify';
  if (first && parts.length > 1 && CHANGE_AFTER_ANSWER.test(parts.slice(1).join(' '))) return 'modify';
  return 'other';
}

/** Urgent interruption words (R-S4): the pending action is cancelled and the new request handled. */
export function isUrgent(text: string): boolean {
  return URGENT.test(text.normalize('NFKC').toLowerCase());
}
