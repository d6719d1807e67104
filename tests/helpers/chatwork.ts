import nock from 'nock';
import { chatworkSignature } from '../../src/adapters/chatwork';
import { BOT_ACCOUNT, CW_WEBHOOK_TOKEN } from './service';

let nextId = 100000;

/** The bot's display name on the fake ChatWork (what `GET /me` answers and the TO button writes). */
export const BOT_NAME = 'Hisho';

/**
 * ChatWork's `send_time` (whole seconds) of a message a person sends now, after reading what the bot last
 * posted: people take more than a second to answer, so it is never earlier than that post (rounded up).
 */
export function sendTimeNow(offsetMs = 0): number {
  return Math.ceil((Date.now() + offsetMs) / 1000);
}

/** A mention_to_me delivery as ChatWork sends it (compact JSON) with its signature. */
export function mentionDelivery(opts: {
  from: number;
  room: number;
  body: string;
  messageId?: string;
  eventTime?: number;
  sendTime?: number;
}): { raw: string; signature: string; messageId: string } {
  const messageId = opts.messageId ?? String(nextId++);
  const now = opts.eventTime ?? sendTimeNow();
  const raw = JSON.stringify({
    webhook_setting_id: '12345',
    webhook_event_type: 'mention_to_me',
    webhook_event_time: now,
    webhook_event: {
      from_account_id: opts.from,
      to_account_id: 9999,
      room_id: opts.room,
      message_id: messageId,
      body: opts.body,
      send_time: opts.sendTime ?? now,
      update_time: 0,
    },
  });
  return { raw, signature: chatworkSignature(raw, CW_WEBHOOK_TOKEN), messageId };
}

/** A message_created delivery of a room webhook (the sender's `account_id`, no `to_account_id`). */
export function roomMessageDelivery(opts: { from: number; room: number; body: string; messageId?: string }): {
  raw: string;
  signature: string;
  messageId: string;
} {
  const messageId = opts.messageId ?? String(nextId++);
  const now = sendTimeNow();
  const raw = JSON.stringify({
    webhook_setting_id: '777',
    webhook_event_type: 'message_created',
    webhook_event_time: now,
    webhook_event: {
      message_id: messageId,
      room_id: opts.room,
      account_id: opts.from,
      body: opts.body,
      send_time: now,
      update_time: 0,
    },
  });
  return { raw, signature: chatworkSignature(raw, CW_WEBHOOK_TOKEN), messageId };
}

/** What ChatWork's TO button inserts before what the person types: `[To:9999]Hishoさん` and a line break. */
export function toButton(text: string, opts: { name?: string; separator?: string } = {}): string {
  return `[To:${BOT_ACCOUNT}]${opts.name ?? `${BOT_NAME}さん`}${opts.separator ?? '\n'}${text}`;
}

/** What ChatWork's 返信 button inserts: `[rp aid=9999 to={room}-{message}]Hishoさん` and a line break. */
export function replyButton(room: number, messageId: string, text: string, opts: { name?: string } = {}): string {
  return `[rp aid=${BOT_ACCOUNT} to=${room}-${messageId}]${opts.name ?? `${BOT_NAME}さん`}\n${text}`;
}

export async function postWebhook(url: string, raw: string, signature?: string): Promise<Response> {
  return fetch(`${url}/webhooks/chatwork`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(signature ? { 'x-chatworkwebhooksignature': signature } : {}) },
    body: raw,
  });
}

/** One scripted failure of the next `POST /rooms/{id}/messages`. */
export type PostFault =
  /** The message lands, but the answer comes after the client's timeout. */
  | { kind: 'slow'; delayMs: number }
  /** A 5xx answer after the message landed (a proxy or a crash after the write). */
  | { kind: 'status_after_landing'; status: number }
  /** A 5xx answer without the message landing. */
  | { kind: 'status'; status: number };

/** A posted message as the fake keeps it. */
export interface FakePost {
  roomId: string;
  body: string;
  token: string;
  messageId: string;
  sendTime: number;
}

/**
 * The ChatWork API as the bot sees it: records every message and task the bot posts, answers
 * `GET /rooms/{id}/messages?force=1` from the recorded posts (the bot's own account), and `GET /me`.
 * `faults` script failures of the next message posts, in order.
 */
export class FakeChatwork {
  readonly posts: FakePost[] = [];
  readonly tasks: { roomId: string; body: Record<string, string>; taskId: string }[] = [];
  /** `PUT /rooms/{id}/tasks/{task}/status` calls (ChatWork's only way to change a task: done or open). */
  readonly taskStatuses: { roomId: string; taskId: string; status: string }[] = [];
  /** Every task call in order: `POST /rooms/{id}/tasks`, `PUT /rooms/{id}/tasks/{task}/status done`. */
  readonly taskCalls: string[] = [];
  readonly faults: PostFault[] = [];
  /** Message list reads (reconciliation). */
  reads = 0;
  /** When set, every message list read answers this status (the room cannot be read: reconciliation fails). */
  readStatus: number | null = null;
  /**
   * What `GET /rooms/{id}/members` answers, by room (as ChatWork sends it); a number is an error status.
   * Rooms not listed answer the bot alone.
   */
  readonly members = new Map<string, Record<string, unknown>[] | number>();
  /** Member list reads, by room. */
  readonly memberReads = new Map<string, number>();

  install(): this {
    this.posts.length = 0;
    this.tasks.length = 0;
    this.taskStatuses.length = 0;
    this.taskCalls.length = 0;
    this.faults.length = 0;
    this.reads = 0;
    this.readStatus = null;
    this.members.clear();
    this.memberReads.clear();
    const self = this;
    const limits = () => ({
      'x-ratelimit-remaining': '299',
      'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 300),
    });
    nock('https://api.chatwork.test')
      .persist()
      .post(/\/v2\/rooms\/\d+\/messages/)
      .reply(function (uri, body, cb) {
        const fault = self.faults.shift();
        const land = () => {
          const params = new URLSearchParams(String(body));
          const post = {
            roomId: uri.split('/')[3]!,
            body: params.get('body') ?? '',
            token: String(this.req.headers['x-chatworktoken'] ?? ''),
            messageId: String(nextId++),
            sendTime: Math.floor(Date.now() / 1000),
          };
          self.posts.push(post);
          return post;
        };
        if (fault?.kind === 'status') return cb(null, [fault.status, { errors: ['scripted failure'] }, limits()]);
        const post = land();
        const answer = () => cb(null, [200, { message_id: post.messageId }, limits()]);
        if (fault?.kind === 'status_after_landing') {
          return cb(null, [fault.status, { errors: ['scripted failure'] }, limits()]);
        }
        if (fault?.kind === 'slow') return void setTimeout(answer, fault.delayMs).unref();
        cb(null, [200, { message_id: post.messageId }, limits()]);
      })
      .get(/\/v2\/rooms\/\d+\/messages/)
      .query(true)
      .reply(function (uri) {
        self.reads++;
        if (self.readStatus !== null) return [self.readStatus, { errors: ['scripted failure'] }, limits()];
        const roomId = uri.split('/')[3]!.split('?')[0]!;
        const list = self.posts
          .filter((p) => p.roomId === roomId)
          .slice(-100)
          .map((p) => ({
            message_id: p.messageId,
            account: { account_id: Number(BOT_ACCOUNT), name: BOT_NAME, avatar_image_url: 'https://example.com/a.png' },
            body: p.body,
            send_time: p.sendTime,
            update_time: 0,
          }));
        return list.length > 0 ? [200, list, limits()] : [204, '', limits()];
      })
      .get(/\/v2\/rooms\/\d+\/members/)
      .reply(function (uri) {
        const roomId = uri.split('/')[3]!;
        self.memberReads.set(roomId, (self.memberReads.get(roomId) ?? 0) + 1);
        const answer = self.members.get(roomId) ?? [chatworkMember(Number(BOT_ACCOUNT), BOT_NAME, 'member')];
        if (typeof answer === 'number') return [answer, { errors: ['scripted failure'] }, limits()];
        return [200, answer, limits()];
      })
      .post(/\/v2\/rooms\/\d+\/tasks/)
      .reply(function (uri, body) {
        const taskId = String(nextId++);
        const roomId = uri.split('/')[3]!;
        self.tasks.push({ roomId, body: Object.fromEntries(new URLSearchParams(String(body))), taskId });
        self.taskCalls.push(`POST /rooms/${roomId}/tasks`);
        return [200, { task_ids: [Number(taskId)] }];
      })
      .put(/\/v2\/rooms\/\d+\/tasks\/\d+\/status/)
      .reply(function (uri, body) {
        const [, , , roomId, , taskId] = uri.split('/');
        const status = new URLSearchParams(String(body)).get('body') ?? '';
        self.taskStatuses.push({ roomId: roomId!, taskId: taskId!, status });
        self.taskCalls.push(`PUT /rooms/${roomId}/tasks/${taskId}/status ${status}`);
        return [200, { task_id: Number(taskId) }];
      });
    return this;
  }
}

/** A room member as `GET /rooms/{id}/members` lists it (PLATFORMS.md A5). */
export function chatworkMember(
  accountId: number,
  name: string,
  role: 'admin' | 'member' | 'readonly' = 'member',
): Record<string, unknown> {
  return {
    account_id: accountId,
    role,
    name,
    chatwork_id: '',
    organization_id: 0,
    organization_name: '',
    department: '',
    avatar_image_url: `https://appdata.chatwork.com/avatar/${accountId}.png`,
  };
}
