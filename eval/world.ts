/**
 * The evaluation world: a throwaway PostgreSQL database per worker slot, holding the evaluation
 * directory, into which each case's situation (history, tasks, goals, memories) is written before its
 * request is built by the service's own functions — the ChatWork webhook's message (`chatworkInbound`) or
 * the Discord adapter's (`toInbound`), the turn prelude, the turn's context (`turnContext`), the brain's
 * input (`brainInput`) and request (`decisionRequest`). tests/eval/service-parity.test.ts holds the eval's
 * requests to the service's, byte for byte.
 */
import { createHash } from 'node:crypto';
import { parseChatworkWebhook } from '../src/adapters/chatwork/webhook.schema';
import { chatworkInbound } from '../src/adapters/chatwork/webhook.route';
import { toInbound } from '../src/adapters/discord/to-inbound';
import type { InboundMessage } from '../src/core/chat';
import { loadDirectory, withReferencedTasks, type Actor, type Directory } from '../src/authorization';
import type { DecideInput } from '../src/brain/brain';
import { ContextBuilder } from '../src/context/context-builder';
import { TURN_CONTEXT_SOURCES } from '../src/context/sources';
import type { TurnContext } from '../src/context/types';
import { applyMigrations } from '../src/db/migrate';
import { createDatabase, type Db } from '../src/db/prisma';
import { SqlParams, sqlRunner, type Sql } from '../src/db/sql';
import type { GuardianPolicy } from '../src/guardian';
import { silentLogger } from '../src/observability/logger';
import { importDirectoryFile } from '../src/org/import-directory';
import { brainInput } from '../src/turn/proposal-stage';
import { turnContext } from '../src/turn/steps/build-context';
import { botMessageCte, userMessageCte } from '../src/context/conversation-log';
import { TurnStore } from '../src/turn/turn-store';
import type { ToolRegistry } from '../src/tools/registry';
import { END_OF_DAY, parseWhen } from '../handlers/_when';
import { scratchServer, type ScratchServer } from '../scripts/lib/scratch-db';
import { EVAL_DIRECTORY_FILE, type EvalCase } from './cases';

/** The bot's ChatWork account and display name in the evaluation (as the TO button writes it). */
export const BOT_ACCOUNT = '9000';
export const BOT_NAME = 'Hisho';
const BOT_DISCORD_ID = '900000000000000001';
export const EVAL_ORG = 'acme';

/** A case ready to be sent: the turn's context as production builds it, and what the deciding layers need. */
export interface PreparedCase {
  msg: InboundMessage;
  actor: Actor;
  ctx: TurnContext;
  /** What the brain is given for the first decision (context, tools offered and restricted), as in the service. */
  input: Required<Pick<DecideInput, 'ctx' | 'tools' | 'restricted'>>;
  directory: Directory;
  /** The organisation's policies with machine rules (Guardian priority 4). */
  policies: GuardianPolicy[];
  /** Seeded task refs (t1 …) → their ids. */
  taskIds: Record<string, string>;
  /** Department id → name (a question may offer 「大阪営業課の田中さん」). */
  departments: Map<string, string>;
  db: Db;
}

/** One database of the world; cases run one at a time in it. */
export interface Slot {
  prepare(c: EvalCase): Promise<PreparedCase>;
}

export interface World {
  slots: Slot[];
  close(): Promise<void>;
}

/** A stable UUID for a case's seeded row (the model sees real-looking ids). */
export function seededId(caseId: string, ref: string): string {
  const h = createHash('sha1').update(`${caseId}/${ref}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Opens `slots` databases cloned from one template that holds the migrated schema and the directory. */
export async function openWorld(opts: {
  databaseUrl?: string;
  slots: number;
  registry: ToolRegistry;
  /** The level of a sender the directory gives none (the service's DEFAULT_USER_LEVEL). */
  defaultUserLevel: number;
  /** Names people address the bot by (the persona's and the ChatWork display name), as the webhook strips them. */
  botNames: readonly string[];
}): Promise<World> {
  const server = await scratchServer({ databaseUrl: opts.databaseUrl, prefix: 'hisho-eval' });
  const stamp = `hisho_eval_${Date.now().toString(36)}_${process.pid}`;
  const opened: { db: Db; end: () => Promise<void> }[] = [];
  try {
    const templateUrl = await server.create(`${stamp}_tpl`);
    await applyMigrations(templateUrl);
    const t = createDatabase({ url: templateUrl, poolMax: 2 });
    await importDirectoryFile(t.db, EVAL_DIRECTORY_FILE);
    await t.db.$disconnect();
    await t.pool.end();
    const slots: Slot[] = [];
    for (let i = 0; i < opts.slots; i++) {
      const url = await server.create(`${stamp}_${i}`, `${stamp}_tpl`);
      const { db, pool } = createDatabase({ url, poolMax: 4 });
      opened.push({
        db,
        end: async () => {
          await db.$disconnect();
          await pool.end();
        },
      });
      slots.push(new DbSlot(db, sqlRunner(db, pool), opts));
    }
    return { slots, close: () => closeAll(opened, server) };
  } catch (err) {
    await closeAll(opened, server);
    throw err;
  }
}

async function closeAll(opened: { end: () => Promise<void> }[], server: ScratchServer): Promise<void> {
  for (const o of opened) await o.end().catch(() => undefined);
  await server.close();
}

/** Thrown when a case's situation cannot be built (unknown member, room …); names the case. */
export class CaseSetupError extends Error {
  constructor(
    readonly caseId: string,
    message: string,
  ) {
    super(`case ${caseId}: ${message}`);
    this.name = 'CaseSetupError';
  }
}

const CASE_TABLES = [
  'conversation_messages',
  'conversation_summaries',
  'conversation_states',
  'pending_actions',
  'outbound_messages',
  'reminders',
  'tasks',
  'goals',
  'memories',
].join(', ');

class DbSlot implements Slot {
  private readonly builder: ContextBuilder;
  private readonly store: TurnStore;

  constructor(
    private readonly db: Db,
    private readonly sql: Sql,
    private readonly o: { registry: ToolRegistry; defaultUserLevel: number; botNames: readonly string[] },
  ) {
    this.store = new TurnStore(sql);
    this.builder = new ContextBuilder({
      db,
      logger: silentLogger(),
      defaultTimezone: 'Asia/Tokyo',
      sources: TURN_CONTEXT_SOURCES,
      sql,
    });
  }

  async prepare(c: EvalCase): Promise<PreparedCase> {
    const now = new Date(c.now);
    await this.db.$executeRawUnsafe(`TRUNCATE ${CASE_TABLES} CASCADE`);
    const [platform, roomId] = splitRoom(c.room);
    const room = await this.db.room.findUnique({ where: { platform_externalId: { platform, externalId: roomId } } });
    const who = await this.sender(c, platform);
    const from = {
      platform,
      roomId,
      accountId: who.accountId,
      name: who.name,
      roomKnown: room !== null,
      authority: room?.authority,
      botNames: this.o.botNames,
    };
    const msg = inbound(c, c.message, { ...from, now });
    // Earlier messages of the person are stored as the service stores them: the text its adapter made.
    const earlier = (text: string, sentAt: Date) => inbound(c, text, { ...from, now: sentAt }).text;
    const taskIds = await this.seed(c, msg, who.memberId, now, earlier);
    const prelude = await this.store.open(msg, `reply:eval:${c.id}`, { defaultLevel: this.o.defaultUserLevel, now });
    const actor = prelude.actor;
    const ctx = await turnContext(this.builder, { msg, actor, profile: prelude.profile, now });
    const input = brainInput(ctx, actor, this.o.registry);
    const policies = ctx.policies
      .filter((p) => p.rule !== undefined && p.rule !== null)
      .map((p) => ({ id: p.id, title: p.title, rule: p.rule as GuardianPolicy['rule'] }));
    const departments = new Map(
      (await this.db.department.findMany({ where: { orgId: EVAL_ORG } })).map((d) => [d.id, d.name]),
    );
    return {
      msg,
      actor,
      ctx,
      input,
      // The owners of the case's tasks join the directory, as the proposal stage adds those a call names.
      directory: await withReferencedTasks(
        this.db,
        EVAL_ORG,
        await loadDirectory(this.db, EVAL_ORG),
        Object.values(taskIds),
      ),
      policies,
      taskIds,
      departments,
      db: this.db,
    };
  }

  /** The sender's platform account (a member's, from the directory) and name. */
  private async sender(
    c: EvalCase,
    platform: string,
  ): Promise<{ accountId: string; name: string; memberId: string | null }> {
    if (typeof c.sender !== 'string') return { accountId: c.sender.account, name: c.sender.name, memberId: null };
    const member = await this.member(c, c.sender);
    const account = await this.db.platformAccount.findFirst({
      where: { orgId: EVAL_ORG, memberId: member.id, platform },
    });
    if (!account) throw new CaseSetupError(c.id, `sender ${c.sender} has no ${platform} account in eval/org.yaml`);
    return { accountId: account.accountId, name: member.name, memberId: member.id };
  }

  private async member(c: EvalCase, id: string): Promise<{ id: string; name: string }> {
    const m = await this.db.member.findUnique({ where: { orgId_id: { orgId: EVAL_ORG, id } } });
    if (!m) throw new CaseSetupError(c.id, `"${id}" is not a member id of eval/org.yaml`);
    return m;
  }

  /** Writes the case's history, tasks, goals and memories; returns the task ids by ref. */
  private async seed(
    c: EvalCase,
    msg: InboundMessage,
    senderId: string | null,
    now: Date,
    earlier: (text: string, sentAt: Date) => string,
  ): Promise<Record<string, string>> {
    const base = { orgId: EVAL_ORG, platform: msg.platform, roomId: msg.roomId, accountId: msg.senderAccountId };
    // The history goes in through the conversation log's fragments, as production stores it: one message per
    // statement, oldest first (the rows of one statement get their ids in no defined order, and the context reads
    // the conversation in id order).
    for (const [i, h] of c.history.entries()) {
      const p = new SqlParams();
      const sentAt = new Date(now.getTime() - (c.history.length - i) * 90_000);
      const cte =
        'user' in h
          ? userMessageCte(p, 'h', { ...base, text: earlier(h.user, sentAt), platformMessageId: `eval-h${i}`, sentAt })
          : botMessageCte(p, 'h', { ...base, text: h.bot, platformMessageId: null, sentAt });
      await this.sql(`WITH ${cte} SELECT 1`, p.values);
    }
    const taskIds: Record<string, string> = {};
    for (const t of c.tasks) {
      const assignee = await this.member(c, t.assignee);
      const creator = t.createdBy ? (await this.member(c, t.createdBy)).id : senderId;
      taskIds[t.id] = seededId(c.id, t.id);
      await this.db.task.create({
        data: {
          id: taskIds[t.id],
          orgId: EVAL_ORG,
          platform: msg.platform,
          roomId: msg.roomId,
          title: t.title,
          status: t.status,
          assigneeMemberId: assignee.id,
          createdByMemberId: creator,
          dueAt: t.due ? parseWhen(t.due, 'Asia/Tokyo', END_OF_DAY)?.at : null,
          createdAt: new Date(now.getTime() - 86_400_000),
        },
      });
    }
    if ((c.goals.length > 0 || c.memories.length > 0) && !senderId)
      throw new CaseSetupError(c.id, 'goals and memories need a member as the sender');
    for (const g of c.goals) {
      await this.db.goal.create({
        data: {
          id: seededId(c.id, g.id),
          orgId: EVAL_ORG,
          memberId: senderId!,
          title: g.title,
          status: 'active',
          targetDate: g.target ? parseWhen(g.target, 'Asia/Tokyo', END_OF_DAY)?.at : null,
        },
      });
    }
    for (const m of c.memories) {
      const subject = m.subject ? (await this.member(c, m.subject)).id : m.kind === 'fact' ? null : senderId;
      await this.db.memory.create({
        data: {
          orgId: EVAL_ORG,
          kind: m.kind,
          subjectMemberId: subject,
          content: m.content,
          createdByMemberId: senderId,
          roomId: msg.roomId,
        },
      });
    }
    return taskIds;
  }
}

/**
 * A ChatWork body as the TO button writes it, whatever language the person then types (PLATFORMS.md):
 * `[To:bot]Hishoさん` and a line break.
 */
function chatworkBody(text: string): string {
  return `[To:${BOT_ACCOUNT}]${BOT_NAME}さん\n${text}`;
}

function splitRoom(room: string): ['chatwork' | 'discord', string] {
  const i = room.indexOf(':');
  return [room.slice(0, i) as 'chatwork' | 'discord', room.slice(i + 1)];
}

/**
 * The message as the platform delivers it, turned into an InboundMessage by the adapter's own code: on ChatWork
 * a `mention_to_me` delivery whose body starts with the TO button's `[To:bot]Hishoさん` line, read by the
 * webhook's schema and `chatworkInbound`; on Discord a leading `<@bot>` mention, read by `toInbound`.
 */
function inbound(
  c: EvalCase,
  text: string,
  o: {
    platform: 'chatwork' | 'discord';
    roomId: string;
    accountId: string;
    name: string;
    now: Date;
    roomKnown: boolean;
    authority?: string;
    botNames: readonly string[];
  },
): InboundMessage {
  const platformMessageId = `eval-${createHash('sha1').update(c.id).digest('hex').slice(0, 12)}`;
  if (o.platform === 'discord') {
    const m = toInbound(
      {
        id: platformMessageId,
        content: `<@${BOT_DISCORD_ID}> ${text}`,
        channelId: o.roomId,
        guildId: '1',
        createdTimestamp: o.now.getTime(),
        author: { id: o.accountId, bot: false, username: o.name },
        member: { displayName: o.name },
        mentions: { users: new Map([[BOT_DISCORD_ID, { id: BOT_DISCORD_ID, username: BOT_NAME }]]) },
      },
      {
        botUserId: BOT_DISCORD_ID,
        room: { orgId: EVAL_ORG, authority: o.authority === 'member' ? 'member' : 'public' },
      },
    );
    if (!m) throw new CaseSetupError(c.id, 'the Discord adapter would ignore this message');
    return m;
  }
  const sent = Math.floor(o.now.getTime() / 1000);
  const delivery = parseChatworkWebhook({
    webhook_setting_id: 'eval',
    webhook_event_type: 'mention_to_me',
    webhook_event_time: sent,
    webhook_event: {
      from_account_id: Number(o.accountId),
      to_account_id: Number(BOT_ACCOUNT),
      message_id: platformMessageId,
      room_id: Number(o.roomId),
      body: chatworkBody(text),
      send_time: sent,
      update_time: 0,
    },
  });
  if (!delivery.success || delivery.data.type === 'unknown')
    throw new CaseSetupError(c.id, `ChatWork would not deliver this message (${JSON.stringify(delivery)})`);
  return chatworkInbound(delivery.data, { orgId: EVAL_ORG, roomListed: o.roomKnown, botNames: o.botNames });
}
