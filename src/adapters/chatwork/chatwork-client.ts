import { z } from 'zod';
import { AppError } from '../../core/app-error';
import type { ChatworkTaskInput, ChatworkTasksApi } from '../../tools/types';
import { ChatworkHttp, type ChatworkClientOptions } from './chatwork-http';

export type { ChatworkClientOptions } from './chatwork-http';

/** A room member's role; roles ChatWork may add later read as `readonly` (least privilege). */
export type ChatworkRole = 'admin' | 'member' | 'readonly';

/** A member of a ChatWork room. */
export interface ChatworkMember {
  accountId: string;
  name: string;
  role: ChatworkRole;
}

const idOut = z.union([z.string().min(1), z.number().int()]).transform(String);
const meSchema = z.object({ account_id: z.number().int(), name: z.string() });
const postMessageSchema = z.object({ message_id: idOut });
const createTaskSchema = z.object({ task_ids: z.array(idOut) });
const messagesSchema = z.array(
  z.object({
    message_id: idOut,
    account: z.object({ account_id: z.number().int(), name: z.string().optional() }),
    body: z.string(),
    send_time: z.number().int(),
  }),
);
const membersSchema = z.array(
  z.object({
    account_id: z.number().int(),
    name: z.string(),
    role: z.enum(['admin', 'member', 'readonly']).catch('readonly'),
  }),
);

/** Ids end up in URL paths and form fields: only digits are accepted. */
function numericId(value: string, what: string): string {
  if (!/^\d+$/.test(value)) throw new AppError('VALIDATION_FAILED', `ChatWork ${what} must be numeric`);
  return value;
}

/** A room message as `GET /rooms/{id}/messages` lists it. */
export interface ChatworkMessage {
  messageId: string;
  accountId: string;
  body: string;
  /** Epoch seconds. */
  sendTime: number;
}

/** The answer in the expected shape. An unexpected answer to a POST is `uncertain`: the POST itself succeeded. */
function shaped<T>(schema: z.ZodType<T>, json: unknown, what: string, uncertain = false): T {
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw new AppError('EXTERNAL_API_FAILED', `ChatWork API ${what} returned an unexpected shape`, { uncertain });
  }
  return parsed.data;
}

/** The ChatWork settings of the service's configuration (src/config/env.ts). */
export interface ChatworkClientConfig {
  CHATWORK_API_TOKEN?: string;
  CHATWORK_API_BASE_URL: string;
  CHATWORK_TIMEOUT_MS: number;
}

/** The service's ChatWork client, from its configuration. Call only when `CHATWORK_API_TOKEN` is set. */
export function chatworkClientFrom(
  config: ChatworkClientConfig,
  logger: ChatworkClientOptions['logger'],
): ChatworkClient {
  return new ChatworkClient({
    apiToken: config.CHATWORK_API_TOKEN!,
    baseUrl: config.CHATWORK_API_BASE_URL,
    logger,
    timeoutMs: config.CHATWORK_TIMEOUT_MS,
  });
}

/**
 * ChatWork API v2 client (PLATFORMS.md A4/A5) on global `fetch`. Sends `X-ChatWorkToken`, form bodies;
 * honours the global and per-room rate limits; retries 429/5xx/network errors with backoff — except that
 * posting a message or a task is never repeated when the first attempt may have landed (see ChatworkHttp).
 * Failures are `AppError('EXTERNAL_API_FAILED')` with status and ChatWork's `errors`, never the token.
 */
export class ChatworkClient implements ChatworkTasksApi {
  private readonly http: ChatworkHttp;

  constructor(options: ChatworkClientOptions) {
    this.http = new ChatworkHttp(options);
  }

  /** `GET /me`: the bot's own account. */
  async getMe(): Promise<{ accountId: string; name: string }> {
    const { json } = await this.http.request('GET', '/me');
    const me = shaped(meSchema, json, 'GET /me');
    return { accountId: String(me.account_id), name: me.name };
  }

  /** `POST /rooms/{roomId}/messages` (1..65535 chars; the caller formats and truncates). */
  async postMessage(roomId: string, body: string): Promise<{ messageId: string }> {
    const room = numericId(roomId, 'room id');
    const { json } = await this.http.request('POST', `/rooms/${room}/messages`, { body }, room);
    return { messageId: shaped(postMessageSchema, json, 'POST messages', true).message_id };
  }

  /** `GET /rooms/{roomId}/messages?force=1`: the room's latest messages (up to 100), oldest first; 204 gives `[]`. */
  async getMessages(roomId: string): Promise<ChatworkMessage[]> {
    const room = numericId(roomId, 'room id');
    const { status, json } = await this.http.request('GET', `/rooms/${room}/messages?force=1`);
    if (status === 204) return [];
    return shaped(messagesSchema, json, 'GET messages').map((m) => ({
      messageId: m.message_id,
      accountId: String(m.account.account_id),
      body: m.body,
      sendTime: m.send_time,
    }));
  }

  /** `POST /rooms/{roomId}/tasks`. */
  async createTask(roomId: string, input: ChatworkTaskInput): Promise<{ taskIds: string[] }> {
    const room = numericId(roomId, 'room id');
    if (input.toIds.length === 0) throw new AppError('VALIDATION_FAILED', 'ChatWork task needs at least one assignee');
    const form: Record<string, string> = {
      body: input.body,
      to_ids: input.toIds.map((id) => numericId(id, 'assignee id')).join(','),
    };
    if (input.limit !== undefined) form.limit = String(Math.floor(input.limit));
    if (input.limitType !== undefined) form.limit_type = input.limitType;
    const { json } = await this.http.request('POST', `/rooms/${room}/tasks`, form, room);
    return { taskIds: shaped(createTaskSchema, json, 'POST tasks', true).task_ids };
  }

  /** `PUT /rooms/{roomId}/tasks/{taskId}/status`; ChatWork names the form field `body`. */
  async updateTaskStatus(roomId: string, taskId: string, status: 'done' | 'open'): Promise<void> {
    const room = numericId(roomId, 'room id');
    const task = numericId(taskId, 'task id');
    await this.http.request('PUT', `/rooms/${room}/tasks/${task}/status`, { body: status });
  }

  /**
   * `GET /rooms/{roomId}/members`; 204 (nothing to list) gives `[]`. `call` bounds retries and timeout
   * (the turn's context reads it once, fast; see context/room-members.ts).
   */
  async getRoomMembers(
    roomId: string,
    call: { maxRetries?: number; timeoutMs?: number } = {},
  ): Promise<ChatworkMember[]> {
    const room = numericId(roomId, 'room id');
    const { status, json } = await this.http.request('GET', `/rooms/${room}/members`, undefined, undefined, true, call);
    if (status === 204) return [];
    return shaped(membersSchema, json, 'GET members').map((m) => ({
      accountId: String(m.account_id),
      name: m.name,
      role: m.role,
    }));
  }
}
