import { z } from 'zod';

/**
 * ChatWork webhook payloads (PLATFORMS.md A2). Ids are numbers except `message_id`, which is a string.
 * Event objects keep unknown fields out (zod strips them); event types we do not handle parse as
 * `unknown` so the route can acknowledge and ignore them.
 */

const id = z.number().int().nonnegative();
// Bounded so that `new Date(s * 1000)` is always a valid date.
const epochSeconds = z.number().nonnegative().max(1e11);

/** `message_created` / `message_updated` event object. */
export const chatworkMessageEventSchema = z.object({
  message_id: z.string().min(1),
  room_id: id,
  account_id: id,
  body: z.string(),
  send_time: epochSeconds,
  // 0 when the message is new; tolerated when absent rather than losing a message over it.
  update_time: epochSeconds.default(0),
});

/** `mention_to_me` event object: the sender is `from_account_id`; there is no `account_id`. */
export const chatworkMentionEventSchema = z.object({
  from_account_id: id,
  to_account_id: id,
  message_id: z.string().min(1),
  room_id: id,
  body: z.string(),
  send_time: epochSeconds,
  update_time: epochSeconds.default(0),
});

/** The envelope common to every delivery; `webhook_event` is checked per event type. */
export const chatworkWebhookEnvelopeSchema = z.object({
  webhook_setting_id: z.union([z.string(), z.number()]).transform(String),
  webhook_event_type: z.string().min(1),
  webhook_event_time: epochSeconds,
  webhook_event: z.unknown(),
});

export type ChatworkMessageEvent = z.infer<typeof chatworkMessageEventSchema>;
export type ChatworkMentionEvent = z.infer<typeof chatworkMentionEventSchema>;

interface EnvelopeFields {
  settingId: string;
  /** Epoch seconds when ChatWork recorded the event. */
  eventTime: number;
}

/** A parsed delivery, discriminated by `type`. */
export type ChatworkWebhook =
  | (EnvelopeFields & { type: 'message_created' | 'message_updated'; event: ChatworkMessageEvent })
  | (EnvelopeFields & { type: 'mention_to_me'; event: ChatworkMentionEvent })
  | (EnvelopeFields & { type: 'unknown'; eventType: string });

/** Result of {@link parseChatworkWebhook}; `issues` name field paths only, never values. */
export type ChatworkWebhookParseResult =
  { success: true; data: ChatworkWebhook } | { success: false; issues: string[] };

function issuePaths(error: z.ZodError, prefix: string): string[] {
  return error.issues.map((i) => [prefix, ...i.path.map(String)].filter(Boolean).join('.') + `:${i.code}`);
}

/**
 * Validates a JSON-parsed webhook body.
 *
 * @param value - The result of `JSON.parse` on the (already verified) raw body.
 * @returns The typed delivery, or the failing field paths (safe to log).
 */
export function parseChatworkWebhook(value: unknown): ChatworkWebhookParseResult {
  const env = chatworkWebhookEnvelopeSchema.safeParse(value);
  if (!env.success) return { success: false, issues: issuePaths(env.error, '') };
  const base: EnvelopeFields = { settingId: env.data.webhook_setting_id, eventTime: env.data.webhook_event_time };
  const type = env.data.webhook_event_type;

  if (type === 'message_created' || type === 'message_updated') {
    const ev = chatworkMessageEventSchema.safeParse(env.data.webhook_event);
    if (!ev.success) return { success: false, issues: issuePaths(ev.error, 'webhook_event') };
    return { success: true, data: { ...base, type, event: ev.data } };
  }
  if (type === 'mention_to_me') {
    const ev = chatworkMentionEventSchema.safeParse(env.data.webhook_event);
    if (!ev.success) return { success: false, issues: issuePaths(ev.error, 'webhook_event') };
    return { success: true, data: { ...base, type, event: ev.data } };
  }
  return { success: true, data: { ...base, type: 'unknown', eventType: type } };
}
