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

/** An MCP server's id: lower-case letters, digits and single underscores (the model sees `<id>__<tool>`). */
const ZMcpServerId = z
  .string({ error: 'must be an id such as "files" (lower-case letters, digits, _)' })
  .regex(/^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/, { error: 'must be an id such as "files" (lower-case letters, digits, _)' })
  .max(20, { error: 'must be at most 20 characters' });

/** A tool name as the server lists it (MCP names: letters, digits, `_`, `-`, `.`). */
const ZMcpToolName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: 'must be a tool name as the server lists it' });

/** What the organisation allows of one MCP tool (issue 42): who may use it and what it does. */
const ZMcpTool = z.strictObject({
  level: z
    .number({ error: LEVEL_TYPE })
    .int({ error: LEVEL_TYPE })
    .min(1, { error: LEVEL_RANGE })
    .max(6, { error: LEVEL_RANGE }),
  /** `write`: an effectful tool (asked before it runs, like Hisho's own); `read`: reads only. */
  effect: z.enum(['read', 'write']),
  /** Phrasings people use for it (「共有フォルダのファイルを読んで」): found by the tool search, never sent. */
  examples: z.array(ZText).optional(),
});

/**
 * A company tool server reached through MCP (issue 42): stdio (`command`, `args`, `env`) or streamable HTTP
 * (`url`, `headers`). Values may name environment variables as `${NAME}` (resolved at start, never logged). Only
 * the tools listed under `tools` are offered.
 */
const ZMcpServer = z
  .strictObject({
    id: ZMcpServerId,
    /** What people and the operator call it (「共有ドライブ」); the id when absent. */
    name: ZText.optional(),
    command: ZText.optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).optional(),
    url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. "https://example.com/mcp"' }).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    /** Per-call time limit (default 30 s). */
    timeout_seconds: z.number().positive().max(600).optional(),
    tools: z.record(ZMcpToolName, ZMcpTool).refine((t) => Object.keys(t).length > 0, {
      error: 'must list at least one tool',
    }),
  })
  .refine((s) => (s.command === undefined) !== (s.url === undefined), {
    error: 'needs either "command" (a stdio server) or "url" (an HTTP server), not both',
  })
  .refine((s) => s.url === undefined || (s.args === undefined && s.env === undefined), {
    error: '"args" and "env" are for a stdio server ("command"); an HTTP server ("url") takes "headers"',
  })
  .refine((s) => s.command === undefined || s.headers === undefined, {
    error: '"headers" are for an HTTP server ("url"); a stdio server takes "env"',
  });

/** One MCP server section of a validated directory. */
export type McpServerSection = z.output<typeof ZMcpServer>;

/** The whole directory file. Lists are optional; a missing list means "none" (and removes old entries on import). */
export const ZDirectory = z.strictObject({
  organization: ZOrganization,
  departments: z.array(ZDepartment).default([]),
  members: z.array(ZMember).default([]),
  rooms: z.array(ZRoom).default([]),
  policies: z.array(ZPolicy).default([]),
  schedules: z.array(ZSchedule).default([]),
  mcp_servers: z.array(ZMcpServer).default([]),
});

/** A validated directory (ids normalised to strings, defaults applied). */
export type Directory = z.output<typeof ZDirectory>;
/** A directory as written in the file. */
export type DirectoryInput = z.input<typeof ZDirectory>;
/** One member entry of a validated directory. */
export type DirectoryMember = Directory['members'][number];
