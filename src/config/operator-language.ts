/** The operator's language for start-up messages and command output. */
export type OperatorLanguage = 'ja' | 'en';

/** The terminal's language: Japanese for a `ja…` locale (LC_ALL, LC_MESSAGES, LANG in that order), else English. */
export function terminalLanguage(env: Record<string, string | undefined> = process.env): OperatorLanguage {
  const locale = env.LC_ALL || env.LC_MESSAGES || env.LANG || '';
  return locale.toLowerCase().startsWith('ja') ? 'ja' : 'en';
}
