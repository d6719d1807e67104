/** A notice preference row: the member's own choice for one kind, or for `all`. */
export interface PreferenceRow {
  kind: string;
  enabled: boolean;
}

/** Notice kinds a member can turn on or off by asking the bot, plus `all`. */
export const PREFERENCE_KINDS = ['daily_digest', 'deadline_reminder', 'goal_checkin', 'all'] as const;
export type PreferenceKind = (typeof PREFERENCE_KINDS)[number];

/**
 * Whether a member receives notices of `kind` (R-P3): their own choice for that kind wins, then their
 * choice for `all`, then the directory's `notices_opt_out` (the admin's default).
 */
export function noticesEnabled(directoryOptOut: boolean, prefs: readonly PreferenceRow[], kind: string): boolean {
  const own = prefs.find((p) => p.kind === kind) ?? prefs.find((p) => p.kind === 'all');
  return own ? own.enabled : !directoryOptOut;
}
