import type { InboundMessage, Platform } from '../adapters/types';
import type { Logger } from '../observability/logger';
import { parseButtonKey } from '../state/answer-parser';
import type { BrainStateManager } from '../state/brain-state-manager';

export interface ButtonClick {
  platform: Platform;
  roomId: string;
  accountId: string;
  /** The button's custom id (`h1:<pending id>_a|_d<round>`). */
  key: string;
  /** The platform's id of this click (dedupes a re-delivered click). */
  clickId: string;
}

export type ButtonOutcome = { status: 'accepted' | 'not_yours' | 'expired' | 'invalid' };

/**
 * Confirmation button clicks (Discord, R-A3): checked at once so the clicker can be told (ephemerally) that
 * the button is not theirs or has expired; an accepted click becomes the text answer 「1」/「2」 through the
 * same intake, so it is ordered with the conversation and decided by the same confirmation flow.
 */
export function createButtonAnswers(deps: {
  states: Pick<BrainStateManager, 'findPendingById'>;
  intake: { accept(msg: InboundMessage): Promise<unknown> };
  logger: Logger;
  now?: () => Date;
}): (click: ButtonClick) => Promise<ButtonOutcome> {
  return async (c) => {
    const parsed = parseButtonKey(c.key);
    if (!parsed) return { status: 'invalid' };
    const pending = await deps.states.findPendingById(parsed.pendingId);
    if (!pending) {
      deps.logger.warn({ platform: c.platform }, 'forged or stale button key');
      return { status: 'invalid' };
    }
    if (pending.key.platform !== c.platform || pending.key.roomId !== c.roomId || pending.key.accountId !== c.accountId)
      return { status: 'not_yours' };
    if (pending.status !== 'pending' || pending.expiresAt.getTime() <= (deps.now?.() ?? new Date()).getTime())
      return { status: 'expired' };
    await deps.intake.accept({
      platform: c.platform,
      orgId: pending.orgId,
      roomId: c.roomId,
      senderAccountId: c.accountId,
      text: parsed.answer === 'approve' ? '1' : '2',
      rawText: '',
      mentions: [],
      platformMessageId: `button:${c.clickId}`,
      sentAt: new Date().toISOString(),
      answerTo: pending.id,
      ...(parsed.round !== undefined ? { answerRound: parsed.round } : {}),
    });
    return { status: 'accepted' };
  };
}
