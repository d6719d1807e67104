import type { Platform } from '../core/chat';
import type { Actor } from '../authorization';
import type { Directory } from '../authorization/directory';
import type { TurnContext } from '../context/types';
import type { Db } from '../db/prisma';
import type { Outbox, WorkClaim } from '../queue/outbox';
import type { ConversationLog } from '../context/conversation-log';
import type { ChatworkTasksApi, DescribeContext, ToolContext, ToolServices } from '../tools/types';

export interface ToolContextsDeps {
  db: Db;
  outbox: Outbox;
  conversations: ConversationLog;
  /** The ChatWork client once ChatWork is configured (null otherwise). */
  chatwork: () => ChatworkTasksApi | null;
  /** The organisation directory, cached per organisation (handlers resolve persons from it); absent → db. */
  directory?: (orgId: string) => Promise<Directory>;
  /** How many recurring schedules a member and a room may hold. */
  scheduleLimits?: { perMember: number; perRoom: number };
  now?: () => Date;
}

/**
 * What a handler (or a tool's `describe`) gets for one call: the turn's facts and the services — the
 * database, the ChatWork tasks API (when ChatWork is configured), and posting to the turn's room through the outbox
 * (once per idempotency key, only while the work item's claim is held; mentions only from the handler's
 * resolved accounts, the text neutralised by the adapter).
 */
export class ToolContexts {
  constructor(private readonly d: ToolContextsDeps) {}

  /**
   * A handler's context. `claim` is the work item this runs for: its claim is checked again before
   * anything is posted (a worker that lost its claim posts nothing).
   */
  forCall(ctx: TurnContext, actor: Actor, idempotencyKey: string, claim?: WorkClaim): ToolContext {
    return { ...this.facts(ctx, actor), idempotencyKey, services: this.services(ctx, idempotencyKey, claim) };
  }

  /** What a tool's `describe` may use: the turn's facts and the database, nothing with effects. */
  forDescribe(ctx: TurnContext, actor: Actor): DescribeContext {
    const services = { db: this.d.db, directory: this.directoryOf(ctx.org.id), scheduleLimits: this.d.scheduleLimits };
    return { ...this.facts(ctx, actor), services, lang: ctx.language };
  }

  private directoryOf(orgId: string): (() => Promise<Directory>) | undefined {
    const load = this.d.directory;
    return load ? () => load(orgId) : undefined;
  }

  private facts(ctx: TurnContext, actor: Actor): Omit<ToolContext, 'idempotencyKey' | 'services'> {
    const member = actor.memberId
      ? { id: actor.memberId, name: actor.name ?? '', level: actor.level, departmentId: actor.departmentId }
      : null;
    return {
      orgId: ctx.org.id,
      platform: ctx.message.platform,
      roomId: ctx.message.roomId,
      member,
      now: () => this.d.now?.() ?? new Date(),
      timezone: ctx.org.timezone,
    };
  }

  private services(ctx: TurnContext, idempotencyKey: string, claim?: WorkClaim): ToolServices {
    const { outbox, conversations } = this.d;
    const platform = ctx.message.platform as Platform;
    const { roomId, senderAccountId } = ctx.message;
    const services: ToolServices = {
      db: this.d.db,
      directory: this.directoryOf(ctx.org.id),
      scheduleLimits: this.d.scheduleLimits,
    };
    // In any room: a task mirrored on ChatWork is kept in step when it is completed or changed from Discord too.
    const chatwork = this.d.chatwork();
    if (chatwork) services.chatwork = chatwork;
    if (outbox.hasSender(platform)) {
      services.postToRoom = async (text, opts) => {
        const mentionAccountIds = opts?.mentionAccountIds ?? [];
        const post = {
          platform,
          roomId,
          text,
          kind: 'notice' as const,
          mentionAccountIds,
          mentionAll: opts?.toAll === true,
        };
        const res = await outbox.send(`post:${idempotencyKey}`, post, claim);
        if (!res.skipped) {
          // Kept in the conversation of the person who asked for it (the console shows rooms from it).
          await conversations.append({
            orgId: ctx.org.id,
            platform,
            roomId,
            accountId: senderAccountId,
            text,
            platformMessageId: res.platformMessageId ?? null,
            sentAt: new Date(),
          });
        }
        return { messageId: res.platformMessageId };
      };
    }
    return services;
  }
}
