import type { z } from 'zod';
import type { Directory } from '../authorization/directory';
import type { Db } from '../db/prisma';
import type { ToolMeta } from '../core/tool-meta';

export { hasEffects, type ParamRole, type Risk, type ToolMeta } from '../core/tool-meta';

/** A capability as declared once in handlers/ (R-T1). */
export interface ToolDefinition<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> extends ToolMeta {
  description: string;
  /** Example user phrasings that should lead to this tool (shown to the LLM). */
  triggerExamples: readonly string[];
  input: I;
  /**
   * The input schema the model reads, when it is not `input`'s own (an MCP tool's, as its operator approved it;
   * `input` then only checks that the parameters are an object, and the server checks the rest).
   */
  inputJsonSchema?: Readonly<Record<string, unknown>>;
  /** Where a tool comes from when it is not Hisho's own: an MCP server, in the operator's words (issue 42). */
  source?: { kind: 'mcp'; serverId: string; serverName: string; tool: string };
  output: O;
  /** Per-call time limit. */
  timeoutMs?: number;
  handler: (input: z.output<I>, ctx: ToolContext) => Promise<z.input<O>>;
  /**
   * What a call will do, stated from its validated input (persons by their directory names, absolute
   * dates in the organisation's time zone, counts): the confirmation question is built from this, never
   * from the model's own summary. May throw {@link ToolError} or `ClarificationNeeded` like the handler.
   * Without it, the question lists the validated parameters.
   */
  describe?: (input: z.output<I>, ctx: DescribeContext) => Promise<EffectDescription & { done: string }>;
}

/** One fact of a call's effect, as a confirmation question shows it (「期限: 11/27（金）」). */
export interface EffectFact {
  /** Stable key for comparing two versions of a call (usually the parameter name). */
  key: string;
  label: string;
  value: string;
}

/** What a call will do, in the person's language. */
export interface EffectDescription {
  /** One sentence: 「田中太郎さんにタスクを作成します」. */
  summary: string;
  /** The same once it has run, in the past tense: 「田中太郎さんにタスクを作成しました」 (absent in older rows). */
  done?: string;
  facts: EffectFact[];
}

/** What `describe` gets: the handler's context without an idempotency key or effectful services. */
export interface DescribeContext extends Omit<ToolContext, 'idempotencyKey' | 'services'> {
  services: Pick<ToolServices, 'db' | 'directory' | 'scheduleLimits'>;
  lang: 'ja' | 'en';
}

/** What a handler gets to do its work (explicit inputs; no globals). */
export interface ToolContext {
  orgId: string;
  platform: string;
  roomId: string;
  /** The asking member (null for unknown senders, who cannot reach tools with effects). */
  member: { id: string; name: string; level: number; departmentId: string | null } | null;
  /** Turn id + proposal index: handlers use it to stay idempotent across retries (R-T3). */
  idempotencyKey: string;
  now: () => Date;
  timezone: string;
  /** Injected services (db, platform clients). */
  services: ToolServices;
}

/** A ChatWork task post (`POST /rooms/{roomId}/tasks`). */
export interface ChatworkTaskInput {
  body: string;
  toIds: string[];
  /** Deadline as a Unix time (seconds). */
  limit?: number;
  limitType?: 'none' | 'date' | 'time';
}

/** The ChatWork tasks API handlers may use (the adapter's ChatworkClient implements it). */
export interface ChatworkTasksApi {
  createTask(roomId: string, t: ChatworkTaskInput): Promise<{ taskIds: string[] }>;
  updateTaskStatus(roomId: string, taskId: string, status: 'done' | 'open'): Promise<unknown>;
}

/** Services handlers may use. Filled at the composition root. */
export interface ToolServices {
  /** The Prisma client; each handler writes only its own tables (docs/architecture.md: who writes which table). */
  db: Db;
  /**
   * Present when ChatWork is configured, in any room: new ChatWork tasks are created only from ChatWork rooms
   * (`_chatwork-task.ts`), but a task mirrored there is completed or changed from anywhere.
   */
  chatwork?: ChatworkTasksApi;
  /**
   * The turn's organisation directory, cached per organisation (departments with names; active members with
   * names, aliases and accounts). Absent: handlers read the database.
   */
  directory?: () => Promise<Directory>;
  /** How many recurring schedules a member and a room may hold (SCHEDULES_PER_MEMBER, SCHEDULES_PER_ROOM). */
  scheduleLimits?: { perMember: number; perRoom: number };
  /**
   * Posts a message to the turn's room on its platform. The adapter neutralises markup in `text`;
   * mentions are added only from `mentionAccountIds` / `toAll` (handler-controlled, never model text).
   */
  postToRoom?: (
    text: string,
    opts?: { mentionAccountIds?: string[]; toAll?: boolean },
  ) => Promise<{ messageId?: string }>;
}

/** A handler failure meant for the model/user (short, neutral). Anything else is internal. */
export class ToolError extends Error {
  constructor(
    message: string,
    readonly code = 'TOOL_ERROR',
  ) {
    super(message);
    this.name = 'ToolError';
  }
}
