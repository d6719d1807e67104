/**
 * Button keys for confirmation buttons (Discord custom_id, console): `h1:<id>_<a|d><round>`, at most 100
 * characters and always matching /^h1:[A-Za-z0-9_-]{1,90}$/. A UUID is written as its 32 lower-case
 * hex digits; any other id as "x" + base64url of its UTF-8 bytes ("x" is not hex, so never ambiguous).
 * The round (0 for the first question of a double confirmation, 1 for the second) binds a click to the
 * question it was shown with; keys without a round (older messages) still parse.
 */

/** A decoded button click. */
export interface ButtonAnswer {
  pendingId: string;
  answer: 'approve' | 'deny';
  /** The confirmation round whose question carried the button, when the key names it. */
  round?: number;
}

const KEY = /^h1:([A-Za-z0-9_-]{1,88})_([ad])([0-9])?$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HEX32 = /^[0-9a-f]{32}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const MAX_BODY = 88;

function encodeId(pendingId: string): string {
  const lower = pendingId.toLowerCase();
  if (UUID.test(lower)) return lower.replace(/-/g, '');
  return `x${Buffer.from(pendingId, 'utf8').toString('base64url')}`;
}

function decodeId(body: string): string | null {
  if (HEX32.test(body)) {
    return `${body.slice(0, 8)}-${body.slice(8, 12)}-${body.slice(12, 16)}-${body.slice(16, 20)}-${body.slice(20)}`;
  }
  if (!body.startsWith('x')) return null;
  const b64 = body.slice(1);
  if (!BASE64URL.test(b64)) return null;
  const id = Buffer.from(b64, 'base64url').toString('utf8');
  // Only the canonical encoding is accepted (no padding tricks, no invalid UTF-8).
  if (id.length === 0 || Buffer.from(id, 'utf8').toString('base64url') !== b64) return null;
  return id;
}

/** The button key for approving or denying a pending action (in a round 0..9). Throws if the id does not fit. */
export function buttonKey(pendingId: string, answer: 'approve' | 'deny', round?: number): string {
  const body = encodeId(pendingId);
  if (pendingId.length === 0 || body.length > MAX_BODY) throw new Error('pending id does not fit in a button key');
  if (round !== undefined && !(Number.isInteger(round) && round >= 0 && round <= 9)) {
    throw new Error('round must be 0..9');
  }
  return `h1:${body}_${answer === 'approve' ? 'a' : 'd'}${round ?? ''}`;
}

/**
 * The key of the 「変更する」 button and of the form it opens (Discord): `hf:<id>_<round>`, in the same id encoding.
 * A different prefix from the answer keys, so no form key ever reads as an answer.
 */
export function formKey(pendingId: string, round = 0): string {
  const body = encodeId(pendingId);
  if (pendingId.length === 0 || body.length > MAX_BODY) throw new Error('pending id does not fit in a form key');
  if (!(Number.isInteger(round) && round >= 0 && round <= 9)) throw new Error('round must be 0..9');
  return `hf:${body}_${round}`;
}

const FORM_KEY = /^hf:([A-Za-z0-9_-]{1,88})_([0-9])$/;

/** Decodes a form key; null for anything malformed (never throws). */
export function parseFormKey(key: unknown): { pendingId: string; round: number } | null {
  if (typeof key !== 'string' || key.length > 100) return null;
  const m = FORM_KEY.exec(key);
  const pendingId = m ? decodeId(m[1]!) : null;
  return pendingId === null ? null : { pendingId, round: Number(m![2]) };
}

/** Decodes a button key; null for anything malformed (never throws). */
export function parseButtonKey(key: unknown): ButtonAnswer | null {
  if (typeof key !== 'string' || key.length > 100) return null;
  const m = KEY.exec(key);
  if (!m) return null;
  const pendingId = decodeId(m[1]!);
  if (pendingId === null) return null;
  const round = m[3] !== undefined ? { round: Number(m[3]) } : {};
  return { pendingId, answer: m[2] === 'a' ? 'approve' : 'deny', ...round };
}
