/** Reply language: Japanese by default, English when the person writes English (no Japanese script). */
export function detectLanguage(text: string): 'ja' | 'en' {
  if (/[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]/.test(text)) return 'ja';
  const letters = (text.match(/[A-Za-z]/g) ?? []).length;
  return letters >= 3 ? 'en' : 'ja';
}
