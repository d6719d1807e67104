import type { InboundMessage, Platform } from '../core/chat';

/**
 * What a platform's receiver hands to the shared intake steps, once it has verified and parsed an event (the
 * ChatWork webhook: signature, JSON, schema, age; Discord: the gateway's `messageCreate`). Each platform states
 * its own rules here; the order in which they apply is {@link RECEIVE_STEPS}, the same on every platform.
 */
export interface Received {
  platform: Platform;
  senderAccountId: string;
  /** The bot's own account on the platform, when known. */
  botAccountId: string | undefined;
  /** Why the message is not for the bot (the platform's addressing rule), or null when it is. */
  notAddressed(): string | null;
  /** The organisation of the message's room (the directory, else the platform's fallback), or null: none. */
  organisation(): Promise<{ orgId: string; roomListed: boolean } | null>;
  /** The message as the queue stores it, or null when it carries nothing to answer. */
  toInbound(org: { orgId: string; roomListed: boolean }): InboundMessage | null;
}

/** What became of a received message: stored (or already stored), or ignored with the reason. */
export type ReceiveOutcome =
  { status: 'accepted' | 'duplicate'; message: InboundMessage } | { status: 'ignored'; reason: string };

/** The intake's durable store (`Intake`): resolves once the message is stored, or known to be a duplicate. */
export interface IntakeStore {
  accept(msg: InboundMessage): Promise<{ status: 'accepted' | 'duplicate' }>;
}

/** What the steps carry from one to the next. */
interface ReceiveState {
  received: Received;
  org?: { orgId: string; roomListed: boolean };
  outcome?: ReceiveOutcome;
}

/** One step: settles `outcome` to end the intake there, or leaves it for the next step. */
type ReceiveStep = (s: ReceiveState, intake: IntakeStore) => void | Promise<void>;

/** 1 — The bot's own posts (an echo of its reply) are never taken in. */
const ignoreOwnMessage: ReceiveStep = (s) => {
  const { senderAccountId, botAccountId } = s.received;
  if (botAccountId !== undefined && senderAccountId === botAccountId) s.outcome = ignored('own_message');
};

/** 2 — Only messages addressed to the bot (the platform's rule: a mention, a reply to the bot, a DM). */
const requireAddressedToBot: ReceiveStep = (s) => {
  const reason = s.received.notAddressed();
  if (reason) s.outcome = ignored(reason);
};

/** 3 — The room's organisation; a message that belongs to none is not taken in. */
const resolveOrganisation: ReceiveStep = async (s) => {
  const org = await s.received.organisation();
  if (org) s.org = org;
  else s.outcome = ignored('no_organisation');
};

/** 4 — Stored durably in the work queue; only then may the platform be acknowledged (R-A2). */
const enqueue: ReceiveStep = async (s, intake) => {
  const message = s.received.toInbound(s.org!);
  if (!message) return void (s.outcome = ignored('nothing_to_answer'));
  const { status } = await intake.accept(message);
  s.outcome = { status, message };
};

/** The shared intake steps, in order, after a platform's verify and parse; before its acknowledgement. */
export const RECEIVE_STEPS: readonly ReceiveStep[] = [
  ignoreOwnMessage,
  requireAddressedToBot,
  resolveOrganisation,
  enqueue,
];

/** Runs {@link RECEIVE_STEPS} over one received message. Throws when storing fails (the platform answers an error). */
export async function receive(received: Received, intake: IntakeStore): Promise<ReceiveOutcome> {
  const s: ReceiveState = { received };
  for (const step of RECEIVE_STEPS) {
    await step(s, intake);
    if (s.outcome) return s.outcome;
  }
  throw new Error('intake steps ended without an outcome');
}

function ignored(reason: string): ReceiveOutcome {
  return { status: 'ignored', reason };
}
