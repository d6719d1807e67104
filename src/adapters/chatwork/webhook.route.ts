import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import express, { type Router } from 'express';
import type { InboundMessage } from '../../core/chat';
import { receive, type IntakeStore, type Received } from '../receive';
import { asAppError, newErrorId } from '../../core/app-error';
import type { Logger } from '../../observability/logger';
import { chatworkAnswerText, parseMentions, parseReplyTo, stripChatworkMarkup } from './markup';
import { verifyChatworkSignature } from './verify-signature';
import { parseChatworkWebhook, type ChatworkWebhook } from './webhook.schema';

/** Where the router serves ChatWork webhooks (mount the router at the app root). */
export const CHATWORK_WEBHOOK_PATH = '/webhooks/chatwork';

/** Dependencies of {@link createChatworkWebhookHandler}. */
export interface ChatworkWebhookDeps {
  webhookToken: string;
  /** The bot's ChatWork account id, once known (from `GET /me`). */
  getBotAccountId: () => string | undefined;
  /** Names people address the bot by (its `GET /me` display name, the persona's names). */
  getBotNames?: () => readonly string[];
  /**
   * Asks ChatWork who the bot is when that is not known yet (`GET /me` failed at start): a room
   * message is only dropped as unaddressed when this, too, fails.
   */
  refreshBotAccount?: () => Promise<unknown>;
  /** Stores the message durably; must resolve only once it is stored (or known to be a duplicate). */
  intake: IntakeStore;
  resolveOrgId: (roomId: string) => Promise<string | null>;
  defaultOrgId: () => string | undefined;
  maxEventAgeSeconds: number;
  now?: () => Date;
  logger: Logger;
  /** Called with the status of every answer (the service counts them by status). */
  onAnswered?: (status: number) => void;
}

/** Longest wait for `GET /me` while answering a webhook. */
const REFRESH_WAIT_MS = 3_000;

async function withTimeout(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    p.catch(() => undefined),
    new Promise<void>((r) => {
      timer = setTimeout(r, ms);
    }),
  ]);
  clearTimeout(timer);
}

function signatureOf(req: IncomingMessage): string | undefined {
  const header = req.headers['x-chatworkwebhooksignature'];
  if (typeof header === 'string' && header) return header;
  const q = req.url?.indexOf('?') ?? -1;
  if (q < 0) return undefined;
  // Given once (a repeated parameter is no signature). A `+` sent unencoded in a query string decodes as a space;
  // base64 never contains spaces.
  const values = new URLSearchParams(req.url!.slice(q + 1)).getAll('chatwork_webhook_signature');
  return values.length === 1 && values[0] ? values[0].replace(/ /g, '+') : undefined;
}

/**
 * A verified, parsed room message as the shared intake steps read it (`src/adapters/receive.ts`): ChatWork's
 * addressing rule, the room's organisation (the directory, else the default one), the message for the queue.
 */
function chatworkReceived(
  hook: Exclude<ChatworkWebhook, { type: 'unknown' | 'message_updated' }>,
  botId: string | undefined,
  deps: ChatworkWebhookDeps,
): Received {
  const roomId = String(hook.event.room_id);
  return {
    platform: 'chatwork',
    senderAccountId: String(hook.type === 'mention_to_me' ? hook.event.from_account_id : hook.event.account_id),
    botAccountId: botId,
    notAddressed: () => {
      // The account webhook belongs to the bot, so its mentions are for the bot even before /me is known.
      if (hook.type === 'mention_to_me')
        return botId !== undefined && String(hook.event.to_account_id) !== botId ? 'not_addressed_to_bot' : null;
      if (botId === undefined) return 'bot_account_unknown';
      return parseMentions(hook.event.body).includes(botId) ? null : 'not_mentioned';
    },
    organisation: async () => {
      const roomOrg = await deps.resolveOrgId(roomId);
      const orgId = roomOrg ?? deps.defaultOrgId();
      return orgId ? { orgId, roomListed: roomOrg !== null } : null;
    },
    toInbound: (org) => chatworkInbound(hook, { ...org, botNames: deps.getBotNames?.() ?? [] }),
  };
}

/** Reasons to ignore a delivery that an operator should look at (the rest are the normal traffic of a room). */
const WARN_REASONS = new Set(['bot_account_unknown', 'no_organisation']);

/**
 * The message a delivery carries, as the pipeline reads it: the text without markup, the answer without the
 * addressee (`[To:9999]Hishoさん`; `botNames` are the names people address the bot by), the mentions. The one
 * place it is made, for the webhook and the evaluation set (`eval/`).
 */
export function chatworkInbound(
  hook: Exclude<ChatworkWebhook, { type: 'unknown' }>,
  o: { orgId: string; roomListed: boolean; botNames: readonly string[] },
): InboundMessage {
  const ev = hook.event;
  return {
    platform: 'chatwork',
    orgId: o.orgId,
    roomId: String(ev.room_id),
    senderAccountId: String(hook.type === 'mention_to_me' ? hook.event.from_account_id : hook.event.account_id),
    text: stripChatworkMarkup(ev.body),
    rawText: ev.body,
    answerText: chatworkAnswerText(ev.body, o.botNames),
    mentions: parseMentions(ev.body),
    replyTo: parseReplyTo(ev.body)?.messageId,
    platformMessageId: ev.message_id,
    sentAt: new Date(ev.send_time * 1000).toISOString(),
    // A room that is not in the directory (a guest room, an outside contact's DM) is public (R-A5).
    ...(o.roomListed ? {} : { roomAuthority: 'public' as const }),
  };
}

/**
 * `POST /webhooks/chatwork` (R-A2). Order: raw body → signature on the raw bytes → JSON → schema → age →
 * the shared intake steps (`RECEIVE_STEPS`: ignore own, addressed to the bot, organisation, durable store) → 200.
 * ChatWork never retries, so 200 is answered only after the intake has stored the message; bodies stay tiny
 * (ChatWork treats > 2,048 bytes as an error).
 *
 * A plain Node request listener over the raw request (the body must be read as bytes before anything parses it);
 * {@link chatworkWebhookRouter} mounts it in the service's express app, which serves the path.
 */
export function createChatworkWebhookHandler(deps: ChatworkWebhookDeps): RequestListener {
  const log = deps.logger.child({ component: 'chatwork-webhook' });
  const now = deps.now ?? (() => new Date());
  const answer = (res: ServerResponse, status: number, body?: string) => {
    deps.onAnswered?.(status);
    if (body === undefined) {
      res.writeHead(status, { 'content-length': '0' });
      res.end();
      return;
    }
    res.writeHead(status, {
      'content-type': 'text/plain; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
    });
    res.end(body);
  };
  const ok = (res: ServerResponse) => answer(res, 200, 'ok');

  const handle = async (req: IncomingMessage & { body?: unknown }, res: ServerResponse): Promise<void> => {
    if (req.body !== undefined && !Buffer.isBuffer(req.body)) {
      // An app-level body parser ran first: the raw bytes needed for the signature are gone.
      const errorId = newErrorId();
      log.error({ reason: 'body_already_parsed', errorId }, 'chatwork.webhook.misconfigured');
      return answer(res, 500, `error (${errorId})`);
    }
    const raw: Buffer = (req.body as Buffer | undefined) ?? Buffer.alloc(0);
    const signature = signatureOf(req);
    if (!verifyChatworkSignature(raw, deps.webhookToken, signature)) {
      log.warn({ reason: signature ? 'invalid_signature' : 'missing_signature' }, 'chatwork.webhook.unauthorized');
      return answer(res, 401);
    }
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      log.warn({ bytes: raw.length }, 'chatwork.webhook.malformed_json');
      return answer(res, 400, 'bad request');
    }
    const parsed = parseChatworkWebhook(json);
    if (!parsed.success) {
      log.warn({ issues: parsed.issues.slice(0, 10) }, 'chatwork.webhook.bad_shape');
      return answer(res, 400, 'bad request');
    }
    const hook = parsed.data;
    const ids = { settingId: hook.settingId, eventType: hook.type === 'unknown' ? hook.eventType : hook.type };
    const ignore = (fields: Record<string, unknown>, reason: string, level: 'info' | 'warn' = 'info') => {
      log[level]({ ...fields, reason }, 'chatwork.webhook.ignored');
      ok(res);
    };
    if (hook.type === 'unknown') return ignore(ids, 'unknown_event_type');
    const msgIds = { ...ids, roomId: String(hook.event.room_id), messageId: hook.event.message_id };
    if (now().getTime() / 1000 - hook.eventTime > deps.maxEventAgeSeconds) {
      return ignore({ ...msgIds, eventTime: hook.eventTime }, 'stale_event', 'warn');
    }
    if (hook.type === 'message_updated') return ignore(msgIds, 'message_updated');
    if (deps.getBotAccountId() === undefined && deps.refreshBotAccount) {
      await withTimeout(deps.refreshBotAccount(), REFRESH_WAIT_MS);
    }
    // Verified and parsed: the shared intake steps (ignore own, addressed to the bot, organisation, store).
    try {
      const outcome = await receive(chatworkReceived(hook, deps.getBotAccountId(), deps), deps.intake);
      if (outcome.status === 'ignored')
        return ignore(msgIds, outcome.reason, WARN_REASONS.has(outcome.reason) ? 'warn' : 'info');
      log.info({ ...msgIds, orgId: outcome.message.orgId, status: outcome.status }, 'chatwork.webhook.accepted');
      ok(res);
    } catch (err) {
      const appErr = asAppError(err);
      log.error({ ...msgIds, errorId: appErr.errorId, code: appErr.code }, 'chatwork.webhook.intake_failed');
      // The error id lets an operator find the failure in the logs (ChatWork shows the answer in its webhook log).
      answer(res, 503, `unavailable (${appErr.errorId})`);
    }
  };

  // Body-reading failures (size limit, aborted upload, bad encoding) keep their 4xx instead of a 500.
  const onReadError = (err: { type?: unknown; status?: unknown }, res: ServerResponse) => {
    const status =
      err.type === 'entity.too.large'
        ? 413
        : typeof err.status === 'number' && err.status >= 400 && err.status < 500
          ? err.status
          : 500;
    const errorId = status >= 500 ? newErrorId() : undefined;
    const type = typeof err.type === 'string' ? err.type : undefined;
    log.warn({ status, errorId, type }, 'chatwork.webhook.request_error');
    answer(res, status, status === 413 ? 'payload too large' : errorId ? `error (${errorId})` : 'error');
  };
  const onUnexpected = (err: unknown, res: ServerResponse) => {
    const appErr = asAppError(err);
    log.error({ errorId: appErr.errorId, code: appErr.code }, 'chatwork.webhook.failed');
    if (!res.headersSent) answer(res, 500, `error (${appErr.errorId})`);
  };

  // Every content type is read raw: the signature must be checked on the exact bytes, whatever the header. The
  // reader is body-parser's (express.raw works on any Node request): its limit, abort and encoding handling.
  const readRaw = express.raw({ type: () => true, limit: '1mb' }) as unknown as (
    req: IncomingMessage,
    res: ServerResponse,
    next: (err?: unknown) => void,
  ) => void;
  return (req, res) => {
    try {
      readRaw(req, res, (err) => {
        if (err) return onReadError(err as { type?: unknown; status?: unknown }, res);
        handle(req, res).catch((e: unknown) => onUnexpected(e, res));
      });
    } catch (err) {
      onUnexpected(err, res);
    }
  };
}

/** A webhook handler as an express router (mount it at the app root). */
export function chatworkWebhookRouter(handler: RequestListener): Router {
  return express.Router().post(CHATWORK_WEBHOOK_PATH, (req, res) => handler(req, res));
}
