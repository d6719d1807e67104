import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

/** The HMAC key of the last token seen: one service has one webhook token, decoded once instead of per delivery. */
let lastKey: { token: string; key: KeyObject } | undefined;

function hmacKey(webhookToken: string): KeyObject {
  if (lastKey?.token !== webhookToken)
    lastKey = { token: webhookToken, key: createSecretKey(Buffer.from(webhookToken, 'base64')) };
  return lastKey.key;
}

/**
 * Computes the ChatWork webhook signature of a request body (R-A2): HMAC-SHA256 keyed with the
 * base64-DECODED webhook token, over the raw body bytes, base64-encoded.
 *
 * @param rawBody - The body exactly as received (never a re-serialised JSON object).
 * @param webhookToken - The webhook setting's token, as shown by ChatWork (base64).
 * @returns The base64 digest ChatWork sends in `x-chatworkwebhooksignature`.
 */
export function chatworkSignature(rawBody: Buffer | string, webhookToken: string): string {
  return createHmac('sha256', hmacKey(webhookToken)).update(rawBody).digest('base64');
}

/**
 * Checks a webhook signature in constant time. Never throws: any missing or malformed input is `false`.
 *
 * @param rawBody - The body exactly as received.
 * @param webhookToken - The webhook setting's token (base64).
 * @param signature - The signature from the header or the `chatwork_webhook_signature` query parameter.
 * @returns `true` only when the signature matches.
 */
export function verifyChatworkSignature(
  rawBody: Buffer | string,
  webhookToken: string,
  signature: string | undefined | null,
): boolean {
  try {
    // An empty token would make every body "verifiable" by anyone who knows that: refuse it.
    if (!signature || !webhookToken) return false;
    const expected = Buffer.from(chatworkSignature(rawBody, webhookToken), 'utf8');
    const given = Buffer.from(signature.trim(), 'utf8');
    // timingSafeEqual throws on different lengths; the length of a digest is not a secret.
    if (expected.length !== given.length) return false;
    return timingSafeEqual(expected, given);
  } catch {
    return false;
  }
}
