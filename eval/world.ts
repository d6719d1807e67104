/**
 * The evaluation world: a throwaway PostgreSQL database per worker slot, holding the evaluation
 * directory, into which each case's situation (history, tasks, goals, memories) is written before its
 * request is built by the production code — turn prelude, ContextBuilder, tool filter, request builder.
 */
import { createHash } from 'node:crypto';
import { parseMentions, stripChatworkMarkup } from '../src/adapters/chatwork/markup';
import { toInbound } from '../src/adapters/discord/to-inbound';
import type { InboundMessage } from '../src/adapters/types';
import { audienceOf, loadDirectory, withReferencedTasks, type Actor, type Directory } from '../src/authorization';
import type { ToolSpec } from '../src/brain/tool-definitions';
import { ContextBuilder } from '../src/context/context-builder';
import { TURN_CONTEXT_SOURCES } from '../src/context/sources';
import type { TurnContext } from '../src/context/types';
import { applyMigrations } from '../src/db/migrate';
import { createDatabase, type Db } from '../src/db/prisma';
import { SqlParams, sqlRunner, type Sql } from '../src/db/sql';
import type { GuardianPolicy } from '../src/guardian';
import { silentLogger } from '../src/observability/logger';
import { importDirectoryFile } from '../src/org/import-directory';
import { offeredTools } from '../src/pipeline/proposal-stage';
import { senderProfile } from '../src/pipeline/turn-runner';
import { botMessageCte, userMessageCte } from '../src/state/conversation-log';
import { TurnStore } from '../src/state/turn-store';
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
  /** Capability tools offered to this sender (as the proposal stage gives them to the brain). */
  tools: ToolSpec[];
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
export async function openWorld(opts: { databaseUrl?: string; slots: number; registry: ToolRegistry }): Promise<World> {
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
      slots.push(new DbSlot(db, sqlRunner(db, pool), opts.registry));
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
    private readonly registry: ToolRegistry,
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
    const msg = inbound(c, {
      platform,
      roomId,
      accountId: who.accountId,
      name: who.name,
      now,
      roomKnown: room !== null,
      authority: room?.authority,
    });
    const taskIds = await this.seed(c, msg, who.memberId, now);
    const prelude = await this.store.open(msg, `reply:eval:${c.id}`, { defaultLevel: 1, now });
    const actor = prelude.actor;
    const sender = senderProfile(msg, actor, prelude.profile);
    const ctx = await this.builder.build({
      msg,
      sender,
      room: { platform, roomId, name: null, authority: actor.roomAuthority },
      audience: audienceOf(actor),
      now,
    });
    const tools = offeredTools(actor, this.registry);
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
      tools,
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
  ): Promise<Record<string, string>> {
    const base = { orgId: EVAL_ORG, platform: msg.platform, roomId: msg.roomId, accountId: msg.senderAccountId };
    // The history goes in through the conversation log's fragments, as production stores it.
    const p = new SqlParams();
    const history = c.history.map((h, i) => {
      const sentAt = new Date(now.getTime() - (c.history.length - i) * 90_000);
      return 'user' in h
        ? userMessageCte(p, `h${i}`, {
            ...base,
            text: inboundText(c, msg.platform, h.user),
            platformMessageId: `eval-h${i}`,
            sentAt,
          })
        : botMessageCte(p, `h${i}`, { ...base, text: h.bot, platformMessageId: null, sentAt });
    });
    if (history.length > 0) await this.sql(`WITH ${history.join(',\n')} SELECT 1`, p.values);
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

/** A ChatWork body as the TO button writes it: `[To:bot]Hishoさん` (no さん in English) and a line break. */
function chatworkBody(c: EvalCase, text: string): string {
  return `[To:${BOT_ACCOUNT}]${BOT_NAME}${c.lang === 'ja' ? 'さん' : ''}\n${text}`;
}

/** The text the adapter stores for an earlier message of the person (history as production keeps it). */
function inboundText(c: EvalCase, platform: string, text: string): string {
  return platform === 'chatwork' ? stripChatworkMarkup(chatworkBody(c, text)) : text;
}

function splitRoom(room: string): ['chatwork' | 'discord', string] {
  const i = room.indexOf(':');
  return [room.slice(0, i) as 'chatwork' | 'discord', room.slice(i + 1)];
}

/**
 * The message as the platform delivers it and the adapter turns it into an InboundMessage: on ChatWork
 * the TO button's `[To:bot]Hishoさん` line (no さん in English), on Discord a leading `<@bot>` mention.
 */
function inbound(
  c: EvalCase,
  o: {
    platform: 'chatwork' | 'discord';
    roomId: string;
    accountId: string;
    name: string;
    now: Date;
    roomKnown: boolean;
    authority?: string;
  },
): InboundMessage {
  const platformMessageId = `eval-${createHash('sha1').update(c.id).digest('hex').slice(0, 12)}`;
  if (o.platform === 'discord') {
    const m = toInbound(
      {
        id: platformMessageId,
        content: `<@${BOT_DISCORD_ID}> ${c.message}`,
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
  const raw = chatworkBody(c, c.message);
  return {
    platform: 'chatwork',
    orgId: EVAL_ORG,
    roomId: o.roomId,
    senderAccountId: o.accountId,
    text: stripChatworkMarkup(raw),
    rawText: raw,
    mentions: parseMentions(raw),
    platformMessageId,
    sentAt: o.now.toISOString(),
    // The ChatWork adapter treats a room missing from the directory as public (R-A5).
    ...(o.roomKnown ? {} : { roomAuthority: 'public' as const }),
  };
}
