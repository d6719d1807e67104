import type { InboundMessage, Platform } from '../core/chat';
import { Steps, type Step } from '../core/steps';
import { stepWatch } from '../observability/tracing';

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

/** A received message whose room belongs to an organisation (after `resolveOrganisation`). */
interface Placed {
  received: Received;
  org: { orgId: string; roomListed: boolean };
}

/** One receive step (`core/steps.ts`): ends the intake with an outcome, or goes on with `next`. */
type ReceiveStep<In, Out = In> = Step<IntakeStore, In, Out, ReceiveOutcome>;

/** 1 — The bot's own posts (an echo of its reply) are never taken in. */
const ignoreOwnMessage: ReceiveStep<Received> = async (r, _intake, next) => {
  if (r.botAccountId !== undefined && r.senderAccountId === r.botAccountId) return ignored('own_message');
  return next(r);
};

/** 2 — Only messages addressed to the bot (the platform's rule: a mention, a reply to the bot, a DM). */
const requireAddressedToBot: ReceiveStep<Received> = async (r, _intake, next) => {
  const reason = r.notAddressed();
  return reason ? ignored(reason) : next(r);
};

/** 3 — The room's organisation; a message that belongs to none is not taken in. */
const resolveOrganisation: ReceiveStep<Received, Placed> = async (received, _intake, next) => {
  const org = await received.organisation();
  return org ? next({ received, org }) : ignored('no_organisation');
};

/** 4 — Stored durably in the work queue; only then may the platform be acknowledged (R-A2). */
const enqueue: ReceiveStep<Placed, never> = async ({ received, org }, intake) => {
  const message = received.toInbound(org);
  if (!message) return ignored('nothing_to_answer');
  const { status } = await intake.accept(message);
  return { status, message };
};

/** The shared intake steps, in order, after a platform's verify and parse; before its acknowledgement. */
export const RECEIVE_STEPS = Steps.of<IntakeStore, Received, ReceiveOutcome>()
  .then(ignoreOwnMessage)
  .then(requireAddressedToBot)
  .then(resolveOrganisation)
  .then(enqueue);

/**
 * Runs {@link RECEIVE_STEPS} over one received message (with tracing on, a span per step in the webhook's trace).
 * Throws when storing fails (the platform answers an error).
 */
export function receive(received: Received, intake: IntakeStore): Promise<ReceiveOutcome> {
  const end = () => Promise.reject(new Error('intake steps ended without an outcome'));
  return RECEIVE_STEPS.run(received, intake, end, stepWatch('receive'));
}

function ignored(reason: string): ReceiveOutcome {
  return { status: 'ignored', reason };
}
