/** A reply language: Japanese by default, English when the person writes English. */
export type Language = 'ja' | 'en';

/**
 * Reply language: Japanese by default, English when the person writes English (no Japanese script).
 * A short answer with too few letters to tell ("1", "ok", "👍") follows the conversation's last
 * message from the person (`previous`), if any.
 */
export function detectLanguage(text: string, previous?: string): Language {
  if (/[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]/.test(text)) return 'ja';
  const letters = (text.match(/[A-Za-z]/g) ?? []).length;
  if (letters >= 3) return 'en';
  return previous !== undefined ? detectLanguage(previous) : 'ja';
}
