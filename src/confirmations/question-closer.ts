import type { ChatSender, Platform } from '../core/chat';
import type { PromptSet } from '../brain/prompts';
import { detectLanguage } from '../core/language';
import type { Db } from '../db/prisma';
import type { Logger } from '../observability/logger';
import { parseButtonKey } from './button-key';
import { closeQuestion, openQuestions } from '../context/conversation-log';
import { answerState, closedQuestionNote } from './confirmation-text';

/** Questions posted longer ago than this are closed in the history only (no platform edit, e.g. on first start). */
const EDIT_WITHIN_MS = 86_400_000;
const BATCH = 200;

/**
 * Buttons follow the state (issue 29): a question whose confirmation was decided — by a text answer, a click,
 * expiry, cancellation, an urgent interruption, a newer question — is closed: its history row's options become
 * `{closed, note, choices}` (the console shows them disabled with the note), and the platform's message loses
 * its buttons and says what happened (Discord). One conditional update per question claims it, so with several
 * instances each question is edited once. Runs every second on the open questions (a partial index holds
 * only those), so expiry closes a question without anyone writing.
 */
export class QuestionCloser {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly d: {
      db: Db;
      prompts: PromptSet;
      senders: ReadonlyMap<Platform, ChatSender>;
      logger: Logger;
      now?: () => Date;
      intervalMs?: number;
    },
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.sweep()
        .catch((err) => this.d.logger.warn({ err: (err as Error).message }, 'closing decided questions failed'))
        .finally(() => (this.running = null));
    }, this.d.intervalMs ?? 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Closes the questions whose confirmation is decided; returns how many it closed. */
  async sweep(): Promise<number> {
    const open = await openQuestions(this.d.db, BATCH);
    if (open.length === 0) return 0;
    const keyed = open.map((q) => ({ q, key: parseButtonKey(q.options[0]?.key) }));
    const ids = [...new Set(keyed.flatMap((k) => (k.key ? [k.key.pendingId] : [])))];
    const actions = await this.d.db.pendingAction.findMany({
      where: { id: { in: ids } },
      select: { id: true, status: true, expiresAt: true, confirmationsGiven: true },
    });
    const byId = new Map(actions.map((a) => [a.id, a]));
    const now = this.d.now?.() ?? new Date();
    let closed = 0;
    for (const { q, key } of keyed) {
      const action = key ? byId.get(key.pendingId) : undefined;
      // A question whose action is gone (retention) can no longer be answered: it expired.
      const state = action
        ? answerState({ ...action, status: action.status as never }, now, key?.round ?? action.confirmationsGiven)
        : 'expired';
      const note = closedQuestionNote(this.d.prompts, state, detectLanguage(q.text));
      if (note === null) continue;
      if (!(await closeQuestion(this.d.db, q.id, state, note))) continue;
      closed++;
      if (now.getTime() - q.createdAt.getTime() > EDIT_WITHIN_MS) continue;
      const sender = this.d.senders.get(q.platform as Platform);
      try {
        await sender?.closeQuestion?.({
          roomId: q.roomId,
          platformMessageId: q.platformMessageId,
          options: q.options,
          note,
        });
      } catch (err) {
        // The buttons stay; a click on them is told the truth (button-answers).
        this.d.logger.warn(
          { platform: q.platform, roomId: q.roomId, err: (err as Error).message },
          'question edit failed',
        );
      }
    }
    return closed;
  }
}
