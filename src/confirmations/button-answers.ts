import type { InboundMessage, Platform, ReplyInteraction } from '../core/chat';
import type { PromptSet } from '../brain/prompts';
import { personaMessage } from '../core/messages';
import type { Logger } from '../observability/logger';
import { parseButtonKey } from './answer-parser';
import type { PendingActions } from './pending-actions';
import type { PendingActionView } from './types';
import { answerState, decidedAnswerText, type AnswerState } from './confirmation-text';

export interface ButtonClick {
  platform: Platform;
  roomId: string;
  accountId: string;
  /** The sender's display name, when the platform gives one. */
  senderName?: string;
  /** The button's custom id (`h1:<pending id>_a|_d<round>`). */
  key: string;
  /** The platform's id of this click. */
  clickId: string;
  /** A click on a private question (Discord: ephemeral): what it leads to is told through it, privately. */
  replyVia?: ReplyInteraction;
}

/**
 * What became of a click. `accepted`: it is the answer of its round (the turn reports in the room);
 * `decided`: the confirmation was already decided (or another answer of this round was taken first) —
 * `note` says how, for the clicker only; `expired` likewise with the expiry note.
 */
export interface ButtonOutcome {
  status: 'accepted' | 'decided' | 'not_yours' | 'expired' | 'invalid';
  /** Shown to the clicker only (Discord: ephemeral; console: in the clicker's page). */
  note?: string;
}

/** How long a concurrent click waits for the first answer of its round to be decided before it is told. */
const SETTLE_WAIT_MS = 20_000;
const SETTLE_POLL_MS = 200;

/**
 * Confirmation button clicks (Discord, console; R-A3): checked at once so the clicker can be told privately
 * that the button is not theirs, or that its confirmation is already decided and how (「もう実行済みです」,
 * 「取り消し済みです」, expired). An open one becomes the text answer 「1」/「2」 through the same intake, so it
 * is ordered with the conversation and decided by the same confirmation flow. Each round takes one click:
 * the intake's dedupe key is the action and round, so a double click or two people's windows clicking at
 * once queue one answer; the others wait for it to be decided and are told the outcome privately (never a
 * second message in the room).
 */
export function createButtonAnswers(deps: {
  pending: Pick<PendingActions, 'find'>;
  intake: { accept(msg: InboundMessage): Promise<{ status: 'accepted' | 'duplicate' }> };
  prompts: PromptSet;
  logger: Logger;
  timezone?: string;
  now?: () => Date;
  /** Test seam: how long a concurrent click waits for the first one's outcome (default 20 s). */
  settleWaitMs?: number;
}): (click: ButtonClick) => Promise<ButtonOutcome> {
  const now = () => deps.now?.() ?? new Date();
  const told = (action: PendingActionView, state: Exclude<AnswerState, 'open'>): ButtonOutcome => ({
    status: state === 'expired' ? 'expired' : 'decided',
    note: decidedAnswerText(deps.prompts, action, state, 'ja', deps.timezone),
  });
  /** Waits until the round's first answer was decided (or moved to the next round), then says how. */
  const settled = async (pendingId: string, round: number | undefined): Promise<ButtonOutcome> => {
    const until = Date.now() + (deps.settleWaitMs ?? SETTLE_WAIT_MS);
    for (;;) {
      const action = await deps.pending.find(pendingId);
      if (!action) return { status: 'invalid' };
      const state = answerState(action, now(), round);
      if (state !== 'open' && state !== 'in_progress') return told(action, state);
      if (Date.now() >= until) return told(action, 'in_progress');
      await new Promise((r) => setTimeout(r, SETTLE_POLL_MS));
    }
  };

  return async (c) => {
    const parsed = parseButtonKey(c.key);
    if (!parsed) return { status: 'invalid' };
    const pending = await deps.pending.find(parsed.pendingId);
    if (!pending) {
      deps.logger.warn({ platform: c.platform }, 'forged or stale button key');
      return { status: 'invalid' };
    }
    if (pending.key.platform !== c.platform || pending.key.roomId !== c.roomId || pending.key.accountId !== c.accountId)
      // Told in the persona's words on every platform (the console has no default note of its own).
      return { status: 'not_yours', note: personaMessage(deps.prompts, 'confirm.not_yours', 'ja') };
    const state = answerState(pending, now(), parsed.round);
    if (state === 'in_progress') return settled(pending.id, parsed.round);
    if (state !== 'open') return told(pending, state);
    const round = parsed.round ?? pending.confirmationsGiven;
    const r = await deps.intake.accept({
      platform: c.platform,
      orgId: pending.orgId,
      roomId: c.roomId,
      senderAccountId: c.accountId,
      ...(c.senderName !== undefined ? { senderName: c.senderName } : {}),
      text: parsed.answer === 'approve' ? '1' : '2',
      rawText: '',
      mentions: [],
      // One answer per round: a second click of the round (either button) is a duplicate of the first.
      platformMessageId: `button:${pending.id}:${round}`,
      sentAt: new Date().toISOString(),
      answerTo: pending.id,
      ...(parsed.round !== undefined ? { answerRound: parsed.round } : {}),
      ...(c.replyVia ? { interaction: c.replyVia } : {}),
    });
    if (r.status === 'duplicate') {
      deps.logger.info({ platform: c.platform, clickId: c.clickId }, 'second click of a confirmation round');
      return settled(pending.id, round);
    }
    return { status: 'accepted' };
  };
}
