import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import express from 'express';
import pino from 'pino';
import type { InboundMessage } from '../../../src/core/chat';
import {
  chatworkWebhookRouter,
  createChatworkWebhookHandler,
  type ChatworkWebhookDeps,
} from '../../../src/adapters/chatwork/webhook.route';
import { chatworkSignature } from '../../../src/adapters/chatwork/verify-signature';

const TOKEN = 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=';
const BOT = '1484814';
const NOW = new Date('2026-01-01T00:00:00Z');
const NOW_S = NOW.getTime() / 1000;

/** The same deps served two ways: mounted in an express app, and as the plain Node handler the service uses. */
const servers: Server[] = [];
const urls: Record<string, string> = {};
let url: string;
/** Statuses the handler reported (the service's webhook-ack metric). */
let answered: number[] = [];
let accepted: InboundMessage[];
let intakeFails: boolean;
let depsOverride: Partial<ChatworkWebhookDeps>;
let logLines: string[] = [];
const captureLogger = pino(
  { level: 'debug' },
  new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  }),
);

beforeAll(async () => {
  const app = express();
  // Deps are read per request through a proxy-like wrapper so each test can override them.
  const deps: ChatworkWebhookDeps = {
    webhookToken: TOKEN,
    getBotAccountId: () => ('getBotAccountId' in depsOverride ? depsOverride.getBotAccountId!() : BOT),
    intake: {
      accept: async (msg) => {
        if (intakeFails) throw new Error('db down');
        accepted.push(msg);
        return { status: 'accepted' };
      },
    },
    resolveOrgId: async (roomId) =>
      depsOverride.resolveOrgId ? depsOverride.resolveOrgId(roomId) : roomId === '777' ? 'org-room' : null,
    defaultOrgId: () => (depsOverride.defaultOrgId ? depsOverride.defaultOrgId() : 'org-default'),
    maxEventAgeSeconds: 600,
    now: () => NOW,
    logger: captureLogger,
    refreshBotAccount: async () => depsOverride.refreshBotAccount?.(),
    onAnswered: (status) => answered.push(status),
  };
  app.use(chatworkWebhookRouter(createChatworkWebhookHandler(deps)));
  const listen = async (name: string, server: Server) => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    servers.push(server);
    urls[name] = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/chatwork`;
  };
  await listen('express router', createServer(app));
  await listen('plain Node handler', createServer(createChatworkWebhookHandler(deps)));
});

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

beforeEach(() => {
  accepted = [];
  intakeFails = false;
  depsOverride = {};
  logLines = [];
  answered = [];
});

function mentionEvent(overrides: Record<string, unknown> = {}, event: Record<string, unknown> = {}) {
  return {
    webhook_setting_id: '12345',
    webhook_event_type: 'mention_to_me',
    webhook_event_time: NOW_S - 5,
    webhook_event: {
      from_account_id: 123456,
      to_account_id: Number(BOT),
      room_id: 567890123,
      message_id: '789012345',
      body: `[To:${BOT}]秘書さん 明日の予定を教えて`,
      send_time: NOW_S - 6,
      update_time: 0,
      ...event,
    },
    ...overrides,
  };
}

function createdEvent(event: Record<string, unknown> = {}, type = 'message_created') {
  return {
    webhook_setting_id: '999',
    webhook_event_type: type,
    webhook_event_time: NOW_S - 1,
    webhook_event: {
      message_id: '42',
      room_id: 777,
      account_id: 5,
      body: 'hello',
      send_time: NOW_S - 2,
      update_time: 0,
      ...event,
    },
  };
}

async function post(
  payload: unknown,
  opts: { sig?: string | null; viaQuery?: boolean; contentType?: string | null } = {},
) {
  const raw = typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload);
  const sig = opts.sig === undefined ? chatworkSignature(raw, TOKEN) : opts.sig;
  const headers: Record<string, string> = {};
  if (opts.contentType !== null) headers['content-type'] = opts.contentType ?? 'application/json';
  let target = url;
  if (sig !== null && opts.viaQuery) target += `?chatwork_webhook_signature=${encodeURIComponent(sig)}`;
  else if (sig !== null) headers['x-chatworkwebhooksignature'] = sig;
  const res = await fetch(target, { method: 'POST', headers, body: raw });
  const body = Buffer.from(await res.arrayBuffer());
  expect(body.length).toBeLessThan(2048);
  return { status: res.status, body: body.toString('utf8') };
}

describe.each(['express router', 'plain Node handler'])('POST /webhooks/chatwork (%s)', (mount) => {
  beforeAll(() => {
    url = urls[mount]!;
  });

  it('reports the status of every answer (the webhook-ack metric)', async () => {
    await post(mentionEvent());
    await post(mentionEvent(), { sig: null });
    await post('{"webhook_event_type":');
    await post(JSON.stringify(mentionEvent({}, { body: 'x'.repeat(1024 * 1024 + 10) })));
    expect(answered).toEqual([200, 401, 400, 413]);
  });

  it('takes no signature from a query that repeats it', async () => {
    const raw = JSON.stringify(mentionEvent());
    const sig = encodeURIComponent(chatworkSignature(raw, TOKEN));
    const res = await fetch(`${url}?chatwork_webhook_signature=${sig}&chatwork_webhook_signature=${sig}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: raw,
    });
    expect(res.status).toBe(401);
    expect(accepted).toEqual([]);
  });

  it('accepts a signed mention_to_me and hands one stripped message to the intake before 200', async () => {
    const res = await post(mentionEvent());
    expect(res).toEqual({ status: 200, body: 'ok' });
    expect(accepted).toEqual([
      {
        platform: 'chatwork',
        orgId: 'org-default',
        roomId: '567890123',
        senderAccountId: '123456',
        text: '秘書さん 明日の予定を教えて',
        rawText: `[To:${BOT}]秘書さん 明日の予定を教えて`,
        answerText: '明日の予定を教えて',
        mentions: [BOT],
        replyTo: undefined,
        platformMessageId: '789012345',
        sentAt: new Date((NOW_S - 6) * 1000).toISOString(),
        // The room is not in the directory: public authority (unknown senders get no tools with effects).
        roomAuthority: 'public',
      },
    ]);
  });

  it("takes a directory room's organisation and leaves its authority to the directory", async () => {
    await post(mentionEvent({}, { room_id: 777 }));
    expect(accepted[0]).toMatchObject({ orgId: 'org-room', roomId: '777' });
    expect(accepted[0]).not.toHaveProperty('roomAuthority');
  });

  it('verifies the signature on the raw bytes of the official sample payload', async () => {
    const raw =
      '{"webhook_setting_id":"12345","webhook_event_type":"mention_to_me","webhook_event_time":' +
      (NOW_S - 1) +
      ',"webhook_event":{"from_account_id":123456,"to_account_id":1484814,"room_id":567890123,' +
      '"message_id":"789012345","body":"[To:1484814]What do you like to eat？","send_time":1498028125,"update_time":0}}';
    expect((await post(raw)).status).toBe(200);
    // Re-serialising would change these bytes; verification must use them as received.
    expect((await post(JSON.stringify(JSON.parse(raw), null, 2))).status).toBe(200);
    expect(accepted.map((m) => m.text)).toEqual(['What do you like to eat？', 'What do you like to eat？']);
  });

  it('reads the body whatever the content type', async () => {
    expect((await post(Buffer.from(JSON.stringify(mentionEvent())), { contentType: null })).status).toBe(200);
    expect((await post(JSON.stringify(mentionEvent()), { contentType: 'text/plain' })).status).toBe(200);
    expect(accepted).toHaveLength(2);
  });

  it('rejects a bad or missing signature with an empty 401 and accepts nothing', async () => {
    expect(await post(mentionEvent(), { sig: chatworkSignature('other', TOKEN) })).toEqual({ status: 401, body: '' });
    expect(await post(mentionEvent(), { sig: null })).toEqual({ status: 401, body: '' });
    expect(await post('not even json', { sig: 'AAAA' })).toEqual({ status: 401, body: '' });
    expect(accepted).toEqual([]);
  });

  it('accepts the signature from the query parameter', async () => {
    expect((await post(mentionEvent(), { viaQuery: true })).status).toBe(200);
    expect(accepted).toHaveLength(1);
    expect((await post(mentionEvent(), { viaQuery: true, sig: 'bad' })).status).toBe(401);
  });

  it('answers 400 to validly signed malformed JSON or a wrong shape', async () => {
    expect((await post('{"webhook_event_type":')).status).toBe(400);
    expect((await post({ ...mentionEvent(), webhook_event: { body: 'x' } })).status).toBe(400);
    expect((await post(mentionEvent({}, { message_id: 789012345 }))).status).toBe(400);
    expect(accepted).toEqual([]);
  });

  it('answers 413 to a body over 1 MB', async () => {
    const huge = JSON.stringify(mentionEvent({}, { body: 'x'.repeat(1024 * 1024 + 10) }));
    const res = await post(huge);
    expect(res.status).toBe(413);
    expect(accepted).toEqual([]);
  });

  it('acknowledges and ignores unknown event types', async () => {
    expect(await post({ ...createdEvent(), webhook_event_type: 'room_archived', webhook_event: {} })).toEqual({
      status: 200,
      body: 'ok',
    });
    expect(accepted).toEqual([]);
  });

  it('takes message_created only when it mentions the bot (To or reply tag)', async () => {
    expect((await post(createdEvent({ body: 'no mention here' }))).status).toBe(200);
    expect((await post(createdEvent({ body: `[code][To:${BOT}][/code] quoted only` }))).status).toBe(200);
    expect(accepted).toEqual([]);
    expect((await post(createdEvent({ body: `[rp aid=${BOT} to=777-40]秘書さん\nお願い` }))).status).toBe(200);
    expect(accepted).toHaveLength(1);
    expect(accepted[0]).toMatchObject({
      orgId: 'org-room',
      senderAccountId: '5',
      text: '秘書さん\nお願い',
      replyTo: '40',
    });
  });

  it('ignores the bot’s own messages', async () => {
    expect((await post(createdEvent({ account_id: Number(BOT), body: `[To:${BOT}] self` }))).status).toBe(200);
    expect((await post(mentionEvent({}, { from_account_id: Number(BOT) }))).status).toBe(200);
    expect(accepted).toEqual([]);
  });

  it('ignores message_updated', async () => {
    expect(
      (await post(createdEvent({ body: `[To:${BOT}] edited`, update_time: NOW_S }, 'message_updated'))).status,
    ).toBe(200);
    expect(accepted).toEqual([]);
  });

  it('ignores events older than maxEventAgeSeconds', async () => {
    expect(await post(mentionEvent({ webhook_event_time: NOW_S - 601 }))).toEqual({ status: 200, body: 'ok' });
    expect(accepted).toEqual([]);
  });

  it('strips a [toall] injection from the text the core sees', async () => {
    await post(mentionEvent({}, { body: `[To:${BOT}][toall][To:999] 全員に連絡して` }));
    expect(accepted[0]?.text).toBe('全員に連絡して');
    expect(accepted[0]?.mentions).toEqual([BOT, '999']);
  });

  it('answers 503 when the intake fails, so a 200 always means stored', async () => {
    intakeFails = true;
    const res = await post(mentionEvent());
    expect(res.status).toBe(503);
    expect(res.body).toMatch(/^unavailable \(E-[A-Z0-9]{7}\)$/);
  });

  it('accepts mentions before the bot id is known but not unverifiable message_created', async () => {
    depsOverride.getBotAccountId = () => undefined;
    await post(createdEvent({ body: `[To:${BOT}] hi` }));
    expect(accepted).toEqual([]);
    await post(mentionEvent());
    expect(accepted).toHaveLength(1);
  });

  it('asks who the bot is when that is still unknown, and takes the room message in once it answers', async () => {
    let known: string | undefined;
    depsOverride.getBotAccountId = () => known;
    depsOverride.refreshBotAccount = async () => {
      known = BOT;
    };
    await post(createdEvent({ body: `[To:${BOT}]Hishoさん\nはい` }));
    expect(accepted).toHaveLength(1);
    expect(accepted[0]).toMatchObject({ text: 'Hishoさん\nはい', answerText: 'はい' });
  });

  it('ignores a message when no organisation can be resolved', async () => {
    depsOverride.defaultOrgId = () => undefined;
    expect((await post(mentionEvent())).status).toBe(200);
    expect(accepted).toEqual([]);
  });

  it('logs ids and codes, never message bodies, signatures or the token', async () => {
    const secretBody = `[To:${BOT}] 極秘の相談内容`;
    await post(mentionEvent({}, { body: secretBody }));
    await post(mentionEvent({}, { body: secretBody }), { sig: 'bad' });
    await post({ ...mentionEvent(), webhook_event: { body: secretBody } });
    intakeFails = true;
    await post(mentionEvent({}, { body: secretBody }));
    const logs = logLines.join('\n');
    expect(logs).toContain('chatwork.webhook.accepted');
    expect(logs).toContain('chatwork.webhook.unauthorized');
    expect(logs).toContain('chatwork.webhook.intake_failed');
    expect(logs).toContain('789012345');
    for (const secret of [
      '極秘',
      TOKEN,
      chatworkSignature(JSON.stringify(mentionEvent({}, { body: secretBody })), TOKEN),
      'db down',
    ]) {
      expect(logs).not.toContain(secret);
    }
  });

  it('refuses to run behind an app-level body parser that already consumed the raw bytes', async () => {
    const app = express();
    app.use(express.json());
    app.use(
      chatworkWebhookRouter(
        createChatworkWebhookHandler({
          webhookToken: TOKEN,
          getBotAccountId: () => BOT,
          intake: { accept: async () => ({ status: 'accepted' }) },
          resolveOrgId: async () => null,
          defaultOrgId: () => 'o',
          maxEventAgeSeconds: 600,
          logger: captureLogger,
        }),
      ),
    );
    const other = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => other.once('listening', resolve));
    try {
      const raw = JSON.stringify(mentionEvent());
      const res = await fetch(`http://127.0.0.1:${(other.address() as AddressInfo).port}/webhooks/chatwork`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-chatworkwebhooksignature': chatworkSignature(raw, TOKEN) },
        body: raw,
      });
      expect(res.status).toBe(500);
      expect(logLines.join('')).toContain('body_already_parsed');
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });
});
