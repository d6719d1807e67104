import type { Platform } from '../adapters/types';
import type { Db } from '../db/prisma';
import type { ToolServices } from '../tools/types';
import type { Outbox, WorkClaim } from './outbox';

/** The ChatWork calls handlers may make (the adapter's client satisfies it). */
export interface ChatworkTasksApi {
  createTask(roomId: string, t: { body: string; toIds: string[]; limit?: number; limitType?: 'none' | 'date' | 'time' }): Promise<{ taskIds: string[] }>;
  updateTaskStatus(roomId: string, taskId: string, status: 'done' | 'open'): Promise<unknown>;
}

/**
 * The services a handler gets for one proposal: the database, the ChatWork tasks API in ChatWork rooms,
 * and posting to the turn's room through the outbox (once per idempotency key, only while the work item's
 * claim is held; mentions only from the handler's resolved accounts, the text neutralised by the adapter).
 */
export function toolServicesFactory(deps: { db: Db; outbox: Outbox; chatwork: () => ChatworkTasksApi | null }) {
  return (
    ctx: { org: { id: string }; message: { platform: string; roomId: string } },
    idempotencyKey: string,
    claim?: WorkClaim,
  ): ToolServices => {
    const platform = ctx.message.platform as Platform;
    const { roomId } = ctx.message;
    const services: ToolServices = { db: deps.db };
    const chatwork = platform === 'chatwork' ? deps.chatwork() : null;
    if (chatwork) services.chatwork = chatwork;
    if (deps.outbox.hasSender(platform)) {
      services.postToRoom = async (text, opts) => {
        const res = await deps.outbox.send(`post:${idempotencyKey}`, {
          platform, roomId, text, kind: 'notice', mentionAccountIds: opts?.mentionAccountIds ?? [], mentionAll: opts?.toAll === true,
        }, claim);
        if (!res.skipped) {
          // Kept in the room's history (the console shows rooms from it), under the bot's own account.
          await deps.db.conversationMessage.create({ data: {
            orgId: ctx.org.id, platform, roomId, accountId: 'bot', role: 'assistant', text, platformMessageId: res.platformMessageId ?? null, sentAt: new Date(),
          } });
        }
        return { messageId: res.platformMessageId };
      };
    }
    return services;
  };
}
