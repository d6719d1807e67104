import { validate as isValidCron } from 'node-cron';
import { z } from 'zod';
import { isTimeZone } from '../config/time-zone';
import { CLOSING_DAY_PATTERN } from '../core/business-calendar';
import { CONFIDENTIAL_TOPICS } from '../guardian/config';
import { QUIET_HOURS_PATTERN } from '../scheduler/notices/quiet-hours';

/**
 * The organisation directory file (SPEC §4 "Organisation directory file", R-F3), as a strict zod schema:
 * every object rejects unknown keys, so a typo such as `levl:` is an error instead of being ignored.
 * Parse files with `parseDirectory` (it adds line numbers and referential checks); this module only
 * describes the shape of one document.
 */

/** The platforms an account or a room can live on. */
export const PLATFORMS = ['chatwork', 'discord', 'console'] as const;
/** A platform name (`chatwork`, `discord`, `console`). */
export type Platform = (typeof PLATFORMS)[number];

/** The kinds of proactive notices a schedule can produce (R-P1). */
export const SCHEDULE_KINDS = ['deadline_reminder', 'daily_digest', 'goal_checkin'] as const;

/** A stable identifier chosen by the admin: non-empty, no white space. */
const ZId = z.string().regex(/^\S+$/, { error: 'must be a non-empty id without spaces' });
const ZText = z.string().trim().min(1, { error: 'must not be empty' });
const ZTimeZone = z.string().refine(isTimeZone, { error: 'must be an IANA time zone such as Asia/Tokyo' });
const ZQuietHours = z
  .string()
  .regex(QUIET_HOURS_PATTERN, { error: 'must be "HH:MM-HH:MM", e.g. "21:00-08:00"' })
  .refine((s) => s.slice(0, 5) !== s.slice(6), { error: 'start and end must differ' });
const UNSAFE_NUMBER = 'must be a whole number small enough to be exact (write large ids in quotes)';

/** An external id written as a string or a (safe) integer; always a string afterwards. */
const ZExternalId = z
  .union([z.string().regex(/^\S+$/), z.number()], { error: 'must be a string or an integer' })
  .refine((v) => typeof v === 'string' || Number.isSafeInteger(v), { error: UNSAFE_NUMBER })
  .transform((v) => String(v));

const ZAccounts = z.strictObject({
  /** ChatWork account id (numeric). */
  chatwork: z
    .union([z.number().positive(), z.string().regex(/^[0-9]+$/)], { error: 'must be a ChatWork account id (digits)' })
    .refine((v) => typeof v === 'string' || Number.isSafeInteger(v), { error: UNSAFE_NUMBER })
    .transform((v) => String(v))
    .optional(),
  /** Discord user id (snowflake). Must be quoted: snowflakes exceed JavaScript's exact integers. */
  discord: z
    .string({ error: 'must be a Discord user id in quotes, e.g. "402938475612345678"' })
    .regex(/^[0-9]+$/, { error: 'must be a Discord user id (digits)' })
    .optional(),
  /** Identity on the local console (usually the member id). */
  console: ZId.optional(),
});

const LEVEL_RANGE = 'must be between 1 and 6';
const LEVEL_TYPE = 'must be a whole number between 1 and 6';

/** A Discord guild (server) id: a snowflake, in quotes. */
const ZGuildId = z
  .string({ error: 'must be a Discord guild id in quotes, e.g. "1122334455667788"' })
  .regex(/^[0-9]+$/, { error: 'must be a Discord guild id (digits)' });

const ZClosingDate = z
  .string({ error: 'must be "MM-DD" (every year) or "YYYY-MM-DD" (once), in quotes' })
  .regex(CLOSING_DAY_PATTERN, { error: 'must be "MM-DD" (every year) or "YYYY-MM-DD" (once), e.g. "12-29"' });

/** A closing day or range of the organisation (年末年始休業 "12-29".."01-03"): not a business day. */
const ZClosingDay = z
  .strictObject({ name: ZText, from: ZClosingDate, to: ZClosingDate.optional() })
  .refine((c) => c.to === undefined || c.to.length === c.from.length, {
    error: '"from" and "to" must both be "MM-DD" or both "YYYY-MM-DD"',
  })
  .refine((c) => c.to === undefined || c.from.length === 5 || c.from <= c.to, {
    error: '"to" must not be before "from"',
  });

const ZOrganization = z.strictObject({
  id: ZId.regex(/^[^:]+$/, { error: 'must not contain ":"' }),
  name: ZText,
  timezone: ZTimeZone.optional(),
  values: z.string().optional(),
  /** Discord guilds (servers) the bot answers in; messages from any other guild are ignored (issue 8). */
  discord_guilds: z.array(ZGuildId).optional(),
  /** No proactive notices in these hours (organisation time zone); notices wait until they end (R-P3). */
  quiet_hours: ZQuietHours.optional(),
  /** Days the organisation is closed besides weekends and national holidays (src/core/business-calendar). */
  closing_days: z.array(ZClosingDay).optional(),
});

const ZDepartment = z.strictObject({
  id: ZId,
  name: ZText,
  parent: ZId.optional(),
  /** Top secret: it and its sub-departments are outside everyone's scope below level 6 (R-Z1). */
  top_secret: z.boolean().optional(),
  /** Other names people use for it (「営業」, "Sales"): names, aliases and ids all resolve (issue 40). */
  aliases: z.array(ZText).optional(),
  /**
   * Confidential topics that are this department's work (issue 40): its members (and its sub-departments') may
   * keep tasks, reminders and notices about them with others; nobody may ask for another person's data.
   */
  handles: z.array(z.enum(CONFIDENTIAL_TOPICS)).optional(),
});

const ZMember = z.strictObject({
  id: ZId,
  name: ZText,
  aliases: z.array(ZText).optional(),
  /** The name's reading in kana, family and given name separated by a space: 「たなか たろう」 (issue 33). */
  reading: ZText.regex(/^[\p{Script=Hiragana}\p{Script=Katakana}ー・\s]+$/u, {
    error: 'must be written in kana, e.g. "たなか たろう"',
  }).optional(),
  /** The name in romaji as the member writes it: "Tanaka Taro" (either order). */
  romaji: ZText.regex(/^[\p{Script=Latin}\s'’.-]+$/u, {
    error: 'must be written in Latin letters, e.g. "Tanaka Taro"',
  }).optional(),
  /** 1 contractor … 6 CEO/CFO (R-Z1). */
  level: z
    .number({ error: LEVEL_TYPE })
    .int({ error: LEVEL_TYPE })
    .min(1, { error: LEVEL_RANGE })
    .max(6, { error: LEVEL_RANGE }),
  department: ZId.optional(),
  title: z.string().optional(),
  accounts: ZAccounts.optional(),
  notices_opt_out: z.boolean().optional(),
  /** The member's own quiet hours (override the organisation's). */
  quiet_hours: ZQuietHours.optional(),
});

const ZRoomRef = z.strictObject({
  platform: z.enum(PLATFORMS),
  id: ZExternalId,
});

const ZRoom = z.strictObject({
  platform: z.enum(PLATFORMS),
  id: ZExternalId,
  name: z.string().optional(),
  /** `member`: org members only; `public`: unknown senders get level 0 (R-A5). */
  authority: z.enum(['member', 'public']).default('member'),
  /** Proactive notices enabled in this room (default true). */
  notices: z.boolean().optional(),
  /** The platform's admin room: admin alerts go here (at most one per platform, R-O5). */
  admin: z.boolean().optional(),
});

/**
 * A machine rule the Guardian applies for a policy (SPEC §3.5 step 4). It matches proposals whose
 * tool is in `tools` (`"*"` = any tool) and, when `keywords` is given, whose parameters contain one of
 * them. `shadow: true` logs the outcome without enforcing it.
 */
export const ZPolicyRule = z.strictObject({
  tools: z.array(ZText).min(1, { error: 'must list at least one tool (or "*")' }),
  action: z.enum(['confirm', 'block']),
  shadow: z.boolean().optional(),
  keywords: z.array(ZText).min(1, { error: 'must list at least one keyword' }).optional(),
});

/** A policy rule as stored in `Policy.rule`. */
export type PolicyRule = z.output<typeof ZPolicyRule>;

const ZPolicy = z.strictObject({
  id: ZId,
  title: ZText,
  content: ZText,
  priority: z.number().int().optional(),
  rule: ZPolicyRule.optional(),
});

const ZSchedule = z.strictObject({
  id: ZId,
  kind: z.enum(SCHEDULE_KINDS),
  /** Five fields (minute hour day month weekday): a period is one minute (R-P2). */
  cron: z.string().refine((c) => c.trim().split(/\s+/).length === 5 && isValidCron(c), {
    error: 'must be a valid cron expression with five fields (minute hour day month weekday), e.g. "0 9 * * 1-5"',
  }),
  timezone: ZTimeZone.optional(),
  room: ZRoomRef.optional(),
  enabled: z.boolean().optional(),
});

/** The whole directory file. Lists are optional; a missing list means "none" (and removes old entries on import). */
export const ZDirectory = z.strictObject({
  organization: ZOrganization,
  departments: z.array(ZDepartment).default([]),
  members: z.array(ZMember).default([]),
  rooms: z.array(ZRoom).default([]),
  policies: z.array(ZPolicy).default([]),
  schedules: z.array(ZSchedule).default([]),
});

/** A validated directory (ids normalised to strings, defaults applied). */
export type Directory = z.output<typeof ZDirectory>;
/** A directory as written in the file. */
export type DirectoryInput = z.input<typeof ZDirectory>;
/** One member entry of a validated directory. */
export type DirectoryMember = Directory['members'][number];
