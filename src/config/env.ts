import fs from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { isTimeZone } from './time-zone';

/**
 * The environment of the service (SPEC §4, R-F1). This file is the only reader of `process.env`.
 * A bad value stops start-up with a message naming the variable; secrets are never echoed.
 */
const flag = (def: 'true' | 'false') =>
  z
    .enum(['true', 'false'])
    .default(def)
    .transform((v) => v === 'true');
const nonEmpty = () => z.string().trim().min(1);
const rate = z.coerce.number().min(0).max(1);

export const ZEnv = z.object({
  // [[SERVICE]]
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BOT_TIMEZONE: z.string().default('Asia/Tokyo').refine(isTimeZone, 'must be an IANA time zone such as Asia/Tokyo'),
  ADMIN_TOKEN: nonEmpty().min(16, 'must be at least 16 characters').optional(),
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  // [[DATABASE]]
  DATABASE_URL: nonEmpty()
    .regex(/^postgres(ql)?:\/\//, 'must start with postgresql://')
    .optional(),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(100).default(10),
  EMBEDDED_DATA_DIR: z.string().default('./data'),
  // [[ORGANISATION]]
  ORG_DIRECTORY_FILE: nonEmpty().optional(),
  // [[ANTHROPIC]]
  ANTHROPIC_API_KEY: nonEmpty().optional(),
  ANTHROPIC_BASE_URL: nonEmpty().url().optional(),
  ANTHROPIC_MODEL: nonEmpty().default('claude-opus-5-5'),
  ANTHROPIC_FALLBACK_MODEL: nonEmpty().default('claude-haiku-5-5'),
  LLM_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600000).default(60000),
  LLM_MAX_RETRIES: z.coerce.number().int().min(0).max(6).default(2),
  LLM_MAX_TOKENS: z.coerce.number().int().min(256).max(32000).default(4096),
  LLM_DAILY_COST_LIMIT_USD: z.coerce.number().min(0).default(50),
  LLM_COST_LIMIT_ACTION: z.enum(['fallback_model', 'refuse']).default('fallback_model'),
  /**
   * The routing rule (src/brain/routing.ts): calls offered no capability tool (notice texts, reports of confirmed
   * actions, conversation summaries, turns of public rooms and strangers) go to LLM_SMALL_MODEL; every call that
   * may act stays on ANTHROPIC_MODEL.
   */
  LLM_ROUTING: flag('true'),
  LLM_SMALL_MODEL: nonEmpty().default('claude-haiku-5-5'),
  /** Lifetime of the cached prompt prefix: `auto` chooses 5 minutes or an hour per organisation from its traffic. */
  LLM_CACHE_TTL: z.enum(['auto', '5m', '1h']).default('auto'),
  /** Yen per US dollar for the cost figures in yen (/admin, the bench); a planning rate, not a quote. */
  COST_JPY_PER_USD: z.coerce.number().positive().max(10000).default(150),
  /** Per-sender budgets (issue 8); 0 turns a limit off. */
  SENDER_TURNS_PER_MINUTE: z.coerce.number().int().min(0).default(20),
  SENDER_TURNS_PER_DAY: z.coerce.number().int().min(0).default(400),
  SENDER_DAILY_COST_LIMIT_USD: z.coerce.number().min(0).default(10),
  PERSONA: z.enum(['soul', 'polite']).default('soul'),
  /** A company's own persona (YAML: name, first person, sentence endings, tone, texts); PERSONA is then unused. */
  PERSONA_FILE: nonEmpty().optional(),
  // [[CHATWORK]]
  CHATWORK_API_TOKEN: nonEmpty().optional(),
  CHATWORK_WEBHOOK_TOKEN: nonEmpty().optional(),
  CHATWORK_API_BASE_URL: nonEmpty().url().default('https://api.chatwork.com/v2'),
  CHATWORK_EVENT_MAX_AGE_SECONDS: z.coerce.number().int().min(10).default(600),
  /** Per-request timeout of the ChatWork API; a post that times out is reconciled, never sent twice. */
  CHATWORK_TIMEOUT_MS: z.coerce.number().int().min(500).max(120000).default(15000),
  /** How long a room's member list (GET /rooms/{id}/members) is reused, in memory per instance (0 = never read). */
  CHATWORK_ROOM_MEMBERS_TTL_SECONDS: z.coerce.number().int().min(0).max(86400).default(600),
  // [[DISCORD]]
  DISCORD_BOT_TOKEN: nonEmpty().optional(),
  DISCORD_ENABLED: flag('true'),
  /**
   * Base URL of Discord's REST API without the version (discord.js adds `/v10`); the gateway URL comes from its
   * `GET /gateway/bot`. Unset: https://discord.com/api. Set it for a REST proxy shared by several instances.
   */
  DISCORD_API_BASE_URL: nonEmpty().url().optional(),
  // [[CONSOLE]]
  /** auto = on when neither ChatWork nor Discord is configured. */
  CONSOLE_ENABLED: z.enum(['auto', 'true', 'false']).default('auto'),
  /** Accept console requests from other machines; needs ADMIN_TOKEN (login page, session cookie). */
  CONSOLE_ALLOW_REMOTE: flag('false'),
  /** Host names the console answers to besides localhost, 127.0.0.1 and [::1] (comma-separated). */
  CONSOLE_ALLOWED_HOSTS: z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim().toLowerCase())
        .filter(Boolean),
    ),
  // [[BRAIN AND GUARDIAN]]
  SHADOW_MODE: flag('false'),
  APPROVAL_MODE: z.enum(['standard', 'strict']).default('standard'),
  AUTO_APPROVE_TOOLS: z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    ),
  /** Guardian rules (names or reason codes) evaluated and recorded but not enforced (shadow mode per rule). */
  GUARDIAN_SHADOW_RULES: z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    ),
  FAST_PATH: flag('false'),
  SELF_CRITIQUE_RATE: rate.default(0.1),
  /** A conversation's summary is (re)written in the background every this many older messages (0 = off). */
  SUMMARY_EVERY_MESSAGES: z.coerce.number().int().min(0).max(1000).default(20),
  STEP_BUDGET: z.coerce.number().int().min(1).max(10).default(4),
  /** Background work (R-W1): default budget of a work item (start_work may ask for less, never more). */
  WORK_MAX_STEPS: z.coerce.number().int().min(1).max(50).default(8),
  WORK_MAX_COST_USD: z.coerce.number().min(0.01).max(100).default(0.5),
  WORK_MAX_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 60)
    .default(60),
  /** How often work waiting for the requester's confirmation looks at the answer. */
  WORK_CONFIRM_POLL_SECONDS: z.coerce.number().int().min(1).max(3600).default(10),
  DEFAULT_USER_LEVEL: z.coerce.number().int().min(1).max(6).default(1),
  // [[WORKERS]]
  /**
   * What this process does (src/app/roles.ts): `all` (default) everything; `intake` takes messages in (webhooks,
   * console, admin, Discord gateway) and runs no turns; `turns` runs turns and notices; `background` runs the
   * schedules, sweeps, alert checks and background work items.
   */
  HISHO_ROLE: z
    .enum(['all', 'intake', 'turns', 'background'], {
      error: () => 'must be one of all, intake, turns, background',
    })
    .default('all'),
  /** Work items (turns, notices, background work) this process runs at once. */
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(8),
  WORK_CLAIM_TTL_MS: z.coerce.number().int().min(1000).default(120000),
  WORK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(3),
  // [[PROACTIVE NOTICES]]
  /** Scheduled notices from the directory's schedules (deadline reminders, digests, goal check-ins). */
  NOTICES_ENABLED: flag('true'),
  /** A missed schedule period older than this is skipped (counted), not sent late. */
  NOTICE_CATCHUP_HORIZON_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 60)
    .default(180),
  /** How often schedules are re-read from the database (a directory import applies without a restart). */
  SCHEDULE_RELOAD_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  /** Recurring schedules one member may keep by asking (reminders, digests, room notices they made). */
  SCHEDULES_PER_MEMBER: z.coerce.number().int().min(0).max(1000).default(20),
  /** Recurring schedules one room may hold, whoever made them. */
  SCHEDULES_PER_ROOM: z.coerce.number().int().min(0).max(5000).default(50),
  // [[ADMIN ALERTS]]
  /** Each kind of admin alert is sent at most once per window (repeats are counted). */
  ALERT_WINDOW_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 60)
    .default(60),
  ALERT_CHECK_SECONDS: z.coerce.number().int().min(5).max(3600).default(60),
  /** A platform adapter down (not connected) this long raises the `adapter_down` admin alert. */
  ADAPTER_DOWN_ALERT_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 60)
    .default(5),
  /** Thresholds of seed 003 §15.1, over the last ALERT_EVAL_MINUTES with at least ALERT_MIN_SAMPLES samples. */
  ALERT_EVAL_MINUTES: z.coerce
    .number()
    .int()
    .min(5)
    .max(24 * 60)
    .default(60),
  ALERT_MIN_SAMPLES: z.coerce.number().int().min(1).default(20),
  ALERT_LLM_P95_SECONDS: z.coerce.number().positive().default(10),
  ALERT_TOOL_ERROR_RATE: rate.default(0.05),
  ALERT_CONFIRMATION_RATE: rate.default(0.3),
  ALERT_BLOCK_RATE: rate.default(0.1),
  /** Daily LLM cost budget in USD for the alert (0 = none); LLM_DAILY_COST_LIMIT_USD is the hard limit. */
  ALERT_DAILY_COST_USD: z.coerce.number().min(0).default(35),
  // [[RETENTION]]
  RETENTION_AUDIT_DAYS: z.coerce.number().int().min(1).default(365),
  RETENTION_HISTORY_DAYS: z.coerce.number().int().min(1).default(90),
});

export type Env = z.output<typeof ZEnv>;

/**
 * Variables earlier versions read (worker threads and their tuning) and this one ignores: the service still starts
 * when one is set, and says so once ({@link retiredVariables}).
 */
const RETIRED = ['WORKERS', 'WORKER_NICE', 'INTAKE_YIELD_AT', 'INTAKE_YIELD_BUSY', 'INTAKE_YIELD_MAX_MS'] as const;

/** The retired variables set in an environment (empty strings count as unset), for a warning at start. */
export function retiredVariables(source: Record<string, string | undefined> = process.env): string[] {
  return RETIRED.filter((key) => (source[key] ?? '').trim() !== '');
}

/**
 * Tracing (issue 43) is configured by the standard OpenTelemetry variables only. The OpenTelemetry SDK reads them
 * itself (`OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`, `OTEL_EXPORTER_OTLP_HEADERS`, … see docs/operations.md); these
 * are the ones Hisho reads too, to decide at start whether to load the SDK at all. With none set, tracing is off
 * and no OpenTelemetry package is loaded.
 */
const otlpProtocol = z.enum(['http/protobuf', 'http/json', 'grpc']);
export const ZTracingEnv = z.object({
  OTEL_SDK_DISABLED: flag('false'),
  /** `otlp` (default when an endpoint is set), `console`, `zipkin` or `none`; a comma-separated list. */
  OTEL_TRACES_EXPORTER: nonEmpty().optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: nonEmpty().url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: nonEmpty().url().optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol.optional(),
  /**
   * Message text, names and tool arguments go into spans (redacted as for the logs). The variable of the
   * OpenTelemetry GenAI instrumentations; off by default.
   */
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: flag('false'),
});

/** What the start needs to know about tracing. */
export interface TracingSettings {
  on: boolean;
  /** Where spans go (for the start-up line): the traces endpoint, the base endpoint, or the exporter's name. */
  destination: string;
  protocol: z.output<typeof otlpProtocol>;
  captureContent: boolean;
  /**
   * Every `OTEL_*` variable of the environment, `.env` included: the start puts those from `.env` into the
   * process's environment, where the SDK reads them.
   */
  variables: Record<string, string>;
}

/** Whether and how to trace, from an environment ({@link environment}); a bad value throws a {@link ConfigError}. */
export function tracingSettings(source: Record<string, string | undefined> = process.env): TracingSettings {
  const variables: Record<string, string> = {};
  for (const [k, v] of Object.entries(source))
    if (k.startsWith('OTEL_') && v !== undefined && v.trim() !== '') variables[k] = v;
  const parsed = ZTracingEnv.safeParse(variables);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  const t = parsed.data;
  const exporters = (t.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  const endpoint = t.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? t.OTEL_EXPORTER_OTLP_ENDPOINT;
  const exporting = exporters.length > 0 ? !exporters.includes('none') : endpoint !== undefined;
  return {
    on: !t.OTEL_SDK_DISABLED && exporting,
    destination:
      exporters.length > 0 && !exporters.includes('otlp')
        ? exporters.join(', ')
        : (endpoint ?? 'http://localhost:4318'),
    protocol: t.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? t.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    captureContent: t.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
    variables,
  };
}

/** Thrown for a bad environment; `message` names every bad variable and never includes its value. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(
      `Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}\nSee .env.example for every variable.`,
    );
    this.name = 'ConfigError';
  }
}

/**
 * The process environment, with `.env` in the working directory (if present) underneath: variables
 * already set in the environment win over the file.
 */
export function environment(dotEnvPath = path.resolve('.env')): Record<string, string | undefined> {
  let file: Record<string, string> = {};
  if (fs.existsSync(dotEnvPath)) file = parseEnv(fs.readFileSync(dotEnvPath, 'utf8')) as Record<string, string>;
  return { ...file, ...process.env };
}

/** Parses an environment (defaults to `process.env`). Empty strings count as unset. */
export function loadConfig(source: Record<string, string | undefined> = process.env): Readonly<Env> {
  const cleaned: Record<string, string> = {};
  for (const key of Object.keys(ZEnv.shape)) {
    const v = source[key];
    if (v !== undefined && v.trim() !== '') cleaned[key] = v;
  }
  const parsed = ZEnv.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const c = parsed.data;
  if (c.CONSOLE_ALLOW_REMOTE && c.CONSOLE_ENABLED !== 'false' && !c.ADMIN_TOKEN) {
    // The console lets whoever uses it speak as any member: from other machines only behind the admin login.
    throw new ConfigError(['CONSOLE_ALLOW_REMOTE: true needs ADMIN_TOKEN (remote console users log in with it)']);
  }
  return Object.freeze(c);
}
