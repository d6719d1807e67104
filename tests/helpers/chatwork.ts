import nock from 'nock';
import { chatworkSignature } from '../../src/adapters/chatwork';
import { CW_WEBHOOK_TOKEN } from './service';

let nextId = 100000;

/** A mention_to_me delivery as ChatWork sends it (compact JSON) with its signature. */
export function mentionDelivery(opts: { from: number; room: number; body: string; messageId?: string; eventTime?: number }): { raw: string; signature: string; messageId: string } {
  const messageId = opts.messageId ?? String(nextId++);
  const now = opts.eventTime ?? Math.floor(Date.now() / 1000);
  const raw = JSON.stringify({
    webhook_setting_id: '12345', webhook_event_type: 'mention_to_me', webhook_event_time: now,
    webhook_event: { from_account_id: opts.from, to_account_id: 9999, room_id: opts.room, message_id: messageId, body: opts.body, send_time: now, update_time: 0 },
  });
  return { raw, signature: chatworkSignature(raw, CW_WEBHOOK_TOKEN), messageId };
}

export async function postWebhook(url: string, raw: string, signature?: string): Promise<Response> {
  return fetch(`${url}/webhooks/chatwork`, { method: 'POST', headers: { 'content-type': 'application/json', ...(signature ? { 'x-chatworkwebhooksignature': signature } : {}) }, body: raw });
}

/** Records every message the bot posts to ChatWork rooms. */
export class FakeChatwork {
  readonly posts: { roomId: string; body: string; token: string }[] = [];
  readonly tasks: { roomId: string; body: Record<string, string> }[] = [];

  install(): this {
    this.posts.length = 0;
    this.tasks.length = 0;
    const self = this;
    nock('https://api.chatwork.test').persist()
      .post(/\/v2\/rooms\/\d+\/messages/).reply(function (uri, body) {
        const params = new URLSearchParams(String(body));
        self.posts.push({ roomId: uri.split('/')[3]!, body: params.get('body') ?? '', token: String(this.req.headers['x-chatworktoken'] ?? '') });
        return [200, { message_id: String(nextId++) }, { 'x-ratelimit-remaining': '299', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 300) }];
      })
      .post(/\/v2\/rooms\/\d+\/tasks/).reply(function (uri, body) {
        self.tasks.push({ roomId: uri.split('/')[3]!, body: Object.fromEntries(new URLSearchParams(String(body))) });
        return [200, { task_ids: [nextId++] }];
      });
    return this;
  }
}
