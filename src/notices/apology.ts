import { replyTo, type InboundMessage } from '../core/chat';
import type { PromptSet } from '../brain/prompts';
import { detectLanguage } from '../core/language';
import { personaMessage } from '../core/messages';
import type { Db } from '../db/prisma';
import { ERROR_CODES, type ErrorCode } from '../core/app-error';
import { replyKeyOf, type ClaimedItem } from '../queue/work-queue';
import type { Logger } from '../observability/logger';
import type { TurnRecorder } from '../turn/turn-recorder';
import { mayHavePosted, type Outbox } from '../queue/outbox';

/** What the work queue enqueues when a user request gives up (`apologyCte` in `src/queue/work-queue.ts`). */
export interface ApologyPayload {
  kind: 'apology';
  errorId: string;
  code: string;
  /** The dedupe key of the item that gave up (its reply's outbox key is `reply:<key>`). */
  failedKey: string;
  /** The person's message that was not answered. */
  message: InboundMessage;
}

/** Why the person is told: their reply did not go out, or it may have and nobody could check. */
export type ApologyReason = 'O_GAVE_UP' | 'O_MAYBE_UNDELIVERED';

/**
 * Tells a person, in the persona's words and with the error id, that their request gave up (SPEC §5: never
 * silent). What reached the room decides what is said, so nothing is said twice:
 * - the reply went out after all (recorded as sent, or found in the room now): nothing;
 * - it may have gone out and the room cannot be read: 「お返事が届いていないかもしれません…」 — neither a claim that
 *   it failed nor that it arrived;
 * - otherwise: the persona's error message for the error's code.
 * The apology is posted once (outbox key = its item's key). It is a notification item: if it cannot be posted it
 * gives up in turn — failed, listed and alerted, with no apology for the apology.
 */
export class Apologies {
  constructor(
    private readonly d: {
      db: Db;
      outbox: Outbox;
      prompts: PromptSet;
      recorder: TurnRecorder;
      logger: Logger;
      shadowMode: boolean;
    },
  ) {}

  async handle(item: ClaimedItem): Promise<void> {
    const p = item.payload as ApologyPayload;
    const msg = p.message;
    const log = this.d.logger.child({ workItemId: String(item.id), errorId: p.errorId, roomId: msg.roomId });
    if (this.d.shadowMode) return;
    const replyKey = replyKeyOf({ dedupeKey: p.failedKey });
    const rows = await this.d.db.outboundMessage.findMany({ where: { dedupeKey: { in: [item.dedupeKey, replyKey] } } });
    const own = rows.find((r) => r.dedupeKey === item.dedupeKey);
    const answer = rows.find((r) => r.dedupeKey === replyKey);
    let reason: ApologyReason = 'O_GAVE_UP';
    // A retry of this apology says what its first attempt said (and the outbox looks for that post first).
    if (own) reason = own.body === this.text('O_MAYBE_UNDELIVERED', p, msg) ? 'O_MAYBE_UNDELIVERED' : reason;
    else if (answer?.status === 'sent') return void log.info('the reply reached the room after all: no apology');
    else if (answer && mayHavePosted(answer)) {
      try {
        const found = await this.d.outbox.reconcile(replyKey, replyTo(msg, ''), answer.createdAt);
        if (found) return void log.warn('the reply was found in the room: no apology');
      } catch {
        reason = 'O_MAYBE_UNDELIVERED';
      }
    }
    const text = this.text(reason, p, msg);
    const res = await this.d.outbox.send(item.dedupeKey, replyTo(msg, text), item);
    log.warn({ reason, skipped: res.skipped }, 'the person was told their request gave up');
    await this.d.recorder
      .record({
        orgId: msg.orgId,
        platform: msg.platform,
        roomId: msg.roomId,
        accountId: msg.senderAccountId,
        memberId: null,
        workItemId: item.id,
        kind: 'notification',
        input: null,
        finalReply: text,
        decision: 'NOTICE',
        reasonCode: reason,
        finalDecider: 'SYSTEM',
        errorId: p.errorId,
        totalMs: 0,
      })
      .catch(() => undefined);
  }

  /** The persona's apology: the error code's message when it names the error id, else the generic one. */
  private text(reason: ApologyReason, p: ApologyPayload, msg: InboundMessage): string {
    const lang = detectLanguage(msg.answerText ?? msg.text);
    const vars = { errorId: p.errorId };
    if (reason === 'O_MAYBE_UNDELIVERED') return personaMessage(this.d.prompts, 'reply.maybe_undelivered', lang, vars);
    const code: ErrorCode = Object.hasOwn(ERROR_CODES, p.code) ? (p.code as ErrorCode) : 'INTERNAL';
    const text = personaMessage(this.d.prompts, `error.${code}`, lang, vars);
    return text.includes(p.errorId) ? text : personaMessage(this.d.prompts, 'error.INTERNAL', lang, vars);
  }
}
