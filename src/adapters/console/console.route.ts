import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import express, { type Router } from 'express';
import { z } from 'zod';
import type { Db } from '../../db/prisma';
import type { Logger } from '../../observability/logger';
import { ensureConsoleAccount } from '../../org/platform-accounts';
import type { AdminAuth } from '../../server/admin-auth';
import { requestGuard } from '../../server/request-guard';
import { roomOrderingPrefix } from '../intake';
import { buttonKey } from '../../confirmations/answer-parser';
import type { InboundMessage } from '../../core/chat';
import type { ConsoleSender } from './console-sender';

export const CONSOLE_ROOM = 'console-general';

export interface ConsoleDeps {
  db: Db;
  intake: { accept(msg: InboundMessage): Promise<{ status: 'accepted' | 'duplicate' }> };
  sender: ConsoleSender;
  /** A confirmation button's click: checked and answered like a Discord click (the note is the clicker's only). */
  buttons: (click: {
    platform: 'console';
    roomId: string;
    accountId: string;
    senderName?: string;
    key: string;
    clickId: string;
  }) => Promise<{ status: string; note?: string }>;
  defaultOrgId: () => string | undefined;
  /** Shown on the page when the brain cannot think yet (e.g. no ANTHROPIC_API_KEY). */
  setupNotice: () => string | null;
  /** Accept requests from other machines (off: loopback only — the console lets you act as anyone); needs `auth`. */
  allowRemote: boolean;
  /** Host names accepted besides localhost / 127.0.0.1 / [::1] (CONSOLE_ALLOWED_HOSTS). */
  allowedHosts: readonly string[];
  /** The admin login (required in remote mode: the console then needs an admin session). */
  auth?: AdminAuth;
  logger: Logger;
}

const ZPost = z.object({
  memberId: z.string().min(1).max(100),
  text: z.string().trim().min(1, 'メッセージが空です。').max(4000, 'メッセージは4000文字までです。'),
  roomId: z.string().min(1).max(100).default(CONSOLE_ROOM),
  /** The confirmation button the text answers (so a stale button cannot approve a newer action). */
  key: z.string().max(100).optional(),
});

/** What the page shows for a request it cannot use (Japanese: operators try the bot here). */
const UNREADABLE = '送信内容を読み取れませんでした。ページを再読み込みしてください。';
const NO_ORG = '組織が読み込まれていません。npm run org:import -- ファイル名 で組織ディレクトリを読み込んでください。';

const PAGE = fs.readFileSync(path.join(__dirname, 'console.html'), 'utf8');

/**
 * The local console (R-A4): a web chat that is a real adapter — messages go through the intake and the
 * same pipeline as ChatWork and Discord; replies are read back from the conversation history.
 */
export function createConsoleRouter(deps: ConsoleDeps): Router {
  const r = express.Router();
  if (deps.allowRemote && !deps.auth?.configured) throw new Error('CONSOLE_ALLOW_REMOTE=true needs ADMIN_TOKEN');
  r.use(
    '/console',
    requestGuard({ allowedHosts: deps.allowedHosts, allowRemote: deps.allowRemote, surface: 'console' }),
  );
  if (deps.allowRemote) {
    r.use('/console/api', deps.auth!.require('api'));
    r.get('/console', deps.auth!.require('page'));
  }
  r.get('/console', (_req, res) => {
    res.type('html').send(PAGE);
  });

  r.get('/console/api/state', async (_req, res) => {
    const orgId = deps.defaultOrgId();
    if (!orgId)
      return void res.json({
        org: null,
        members: [],
        room: CONSOLE_ROOM,
        notice: NO_ORG,
      });
    const [org, members, depts] = await Promise.all([
      deps.db.organization.findUnique({ where: { id: orgId } }),
      deps.db.member.findMany({
        where: { orgId, active: true },
        orderBy: [{ level: 'desc' }, { id: 'asc' }],
        include: { accounts: { where: { platform: 'console' } } },
      }),
      deps.db.department.findMany({ where: { orgId } }),
    ]);
    const deptName = new Map(depts.map((d) => [d.id, d.name]));
    res.json({
      org: org ? { id: org.id, name: org.name } : null,
      room: CONSOLE_ROOM,
      notice: deps.setupNotice(),
      members: members.map((m) => ({
        id: m.id,
        name: m.name,
        level: m.level,
        department: m.departmentId ? (deptName.get(m.departmentId) ?? null) : null,
        title: m.title ?? null,
        accountId: m.accounts[0]?.accountId ?? m.id,
      })),
    });
  });

  r.post('/console/api/messages', express.json({ limit: '16kb' }), async (req, res) => {
    const parsed = ZPost.safeParse(req.body);
    if (!parsed.success)
      return void res
        .status(400)
        .json({ error: parsed.error.issues.find((i) => i.path[0] === 'text')?.message ?? UNREADABLE });
    const orgId = deps.defaultOrgId();
    if (!orgId) return void res.status(409).json({ error: NO_ORG });
    const member = await deps.db.member.findUnique({
      where: { orgId_id: { orgId, id: parsed.data.memberId } },
      include: { accounts: { where: { platform: 'console' } } },
    });
    if (!member || !member.active)
      return void res
        .status(404)
        .json({ error: 'このメンバーは見つかりません。ページを再読み込みして選び直してください。' });
    const accountId = member.accounts[0]?.accountId ?? (await ensureConsoleAccount(deps.db, orgId, member.id));
    if (!accountId) {
      return void res.status(409).json({
        error: 'このメンバーのコンソール用IDを別のメンバーが使っています。組織ディレクトリを読み込み直してください。',
      });
    }
    const id = randomUUID();
    const msg: InboundMessage = {
      platform: 'console',
      orgId,
      roomId: parsed.data.roomId,
      senderAccountId: accountId,
      senderName: member.name,
      text: parsed.data.text,
      rawText: parsed.data.text,
      mentions: [],
      platformMessageId: id,
      sentAt: new Date().toISOString(),
    };
    if (parsed.data.key !== undefined) {
      // A button: its answer is the button's, whatever the text; a decided confirmation is told to this page only.
      const outcome = await deps.buttons({
        platform: 'console',
        roomId: parsed.data.roomId,
        accountId,
        senderName: member.name,
        key: parsed.data.key,
        clickId: id,
      });
      if (outcome.status === 'invalid') return void res.status(400).json({ error: 'このボタンはもう使えません。' });
      if (outcome.status !== 'accepted')
        return void res.status(200).json({ id: null, status: outcome.status, note: outcome.note ?? null });
      return void res.status(202).json({ id });
    }
    await deps.intake.accept(msg);
    res.status(202).json({ id });
  });

  r.get('/console/api/messages', async (req, res) => {
    const roomId = typeof req.query.room === 'string' ? req.query.room : CONSOLE_ROOM;
    const after = /^\d+$/.test(String(req.query.after ?? '')) ? BigInt(String(req.query.after)) : 0n;
    const wait = req.query.wait === '1';
    const load = () =>
      deps.db.conversationMessage.findMany({
        where: { platform: 'console', roomId, id: { gt: after } },
        orderBy: { id: 'asc' },
        take: 200,
      });
    let rows = await load();
    let busy = await turnRunning(deps.db, roomId);
    if (rows.length === 0 && wait) {
      // While a turn runs the page re-asks every 2 s, so the typing indicator goes once the turn ends (a reply
      // wakes it at once; a turn that ends without one is noticed then).
      await deps.sender.waitForNext(busy ? 2000 : 15000);
      rows = await load();
      busy = await turnRunning(deps.db, roomId);
    }
    const accounts = await deps.db.platformAccount.findMany({
      where: { platform: 'console', accountId: { in: [...new Set(rows.map((r) => r.accountId))] } },
      include: { member: { select: { name: true } } },
    });
    const nameOf = new Map(accounts.map((a) => [a.accountId, a.member.name]));
    // Questions decided since the page drew them: their buttons are disabled and say what happened.
    const closed = await deps.db.$queryRaw<{ id: bigint; note: string | null }[]>`
      SELECT id, options ->> 'note' AS note FROM conversation_messages
      WHERE platform = 'console' AND "roomId" = ${roomId} AND role = 'assistant' AND options ? 'closed'
      ORDER BY id DESC LIMIT 50`;
    const messages = [];
    for (const r of rows)
      messages.push({
        id: r.id.toString(),
        role: r.role,
        accountId: r.accountId,
        name: r.role === 'user' ? (nameOf.get(r.accountId) ?? '（不明なメンバー）') : null,
        text: r.text,
        // A button press is stored as its answer 「1」/「2」: the bubble shows the button's label.
        ...(r.role === 'user' ? await buttonLabel(deps.db, r) : {}),
        ...optionsOf(r.options),
        at: r.sentAt.toISOString(),
      });
    res.json({ busy, closed: closed.map((c) => ({ id: c.id.toString(), note: c.note })), messages });
  });
  return r;
}

/** A history row's options as the page reads them: the choices, and once decided, what happened. */
function optionsOf(stored: unknown): { options: unknown; closed?: string | null } {
  if (stored && typeof stored === 'object' && !Array.isArray(stored) && 'closed' in stored) {
    const c = stored as { note?: unknown; choices?: unknown };
    return { options: c.choices ?? null, closed: typeof c.note === 'string' ? c.note : null };
  }
  return { options: stored ?? null };
}

/** Whether a person's message in the room is waiting for or in its turn (the page shows the bot typing). */
async function turnRunning(db: Db, roomId: string): Promise<boolean> {
  const prefix = `${roomOrderingPrefix('console', roomId).replace(/[\\%_]/g, '\\$&')}%`;
  const open = await db.$queryRaw<{ one: number }[]>`
    SELECT 1 AS one FROM work_items
    WHERE state IN ('queued', 'running') AND type = 'user_request' AND "orderingKey" LIKE ${prefix}
    LIMIT 1`;
  return open.length > 0;
}

/**
 * The label of the button a user row answered (`button:<pending id>:<round>`, text 「1」 or 「2」), read from
 * the question that offered it; nothing for a typed message or when the question is gone.
 */
async function buttonLabel(
  db: Db,
  row: { accountId: string; roomId: string; text: string; platformMessageId: string | null },
): Promise<{ label?: string }> {
  const m = /^button:(.+):(\d)$/.exec(row.platformMessageId ?? '');
  if (!m || (row.text !== '1' && row.text !== '2')) return {};
  let key: string;
  try {
    key = buttonKey(m[1]!, row.text === '1' ? 'approve' : 'deny', Number(m[2]));
  } catch {
    return {};
  }
  const offered = JSON.stringify([{ key }]);
  const found = await db.$queryRaw<{ label: string | null }[]>`
    SELECT (SELECT o ->> 'label' FROM jsonb_array_elements(CASE WHEN jsonb_typeof(options) = 'array'
              THEN options ELSE options -> 'choices' END) o WHERE o ->> 'key' = ${key} LIMIT 1) AS label
    FROM conversation_messages
    WHERE platform = 'console' AND "roomId" = ${row.roomId} AND "accountId" = ${row.accountId} AND role = 'assistant'
      AND (options @> ${offered}::jsonb OR options -> 'choices' @> ${offered}::jsonb)
    ORDER BY id DESC LIMIT 1`;
  const label = found[0]?.label;
  return typeof label === 'string' && label !== '' ? { label } : {};
}
