/** One line of /admin's setup section (Japanese, no codes): built by app/setup-status.ts. */
export interface SetupItem {
  key: 'ai' | 'chatwork' | 'discord' | 'console' | 'directory' | 'admin' | 'data' | 'proxy';
  label: string;
  /** ok: works; warn: works, but something is worth doing; off: not set up (may be fine); problem: broken. */
  state: 'ok' | 'warn' | 'off' | 'problem';
  text: string;
}

/** What is set up and what is not, for the overview. */
export interface SetupReport {
  items: SetupItem[];
  /** Today's conversations (organisation days in BOT_TIMEZONE) and how many the AI could not answer (not set up). */
  today: { turns: number; aiFailed: number };
}
