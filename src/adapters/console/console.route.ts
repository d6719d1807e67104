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
  text: z.string().trim().min(1, 'text is empty').max(4000, 'text is longer than 4000 characters'),
  roomId: z.string().min(1).max(100).default(CONSOLE_ROOM),
  /** The confirmation button the text answers (so a stale button cannot approve a newer action). */
  key: z.string().max(100).optional(),
});

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
        notice: 'No organisation is loaded: run `npm run org:import -- FILE`.',
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
        accountId: m.accounts[0]?.accountId ?? m.id,
      })),
    });
  });

  r.post('/console/api/messages', express.json({ limit: '16kb' }), async (req, res) => {
    const parsed = ZPost.safeParse(req.body);
    if (!parsed.success)
      return void res
        .status(400)
        .json({ error: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ') });
    const orgId = deps.defaultOrgId();
    if (!orgId) return void res.status(409).json({ error: 'no organisation loaded' });
    const member = await deps.db.member.findUnique({
      where: { orgId_id: { orgId, id: parsed.data.memberId } },
      include: { accounts: { where: { platform: 'console' } } },
    });
    if (!member || !member.active) return void res.status(404).json({ error: 'unknown member' });
    const accountId = member.accounts[0]?.accountId ?? (await ensureConsoleAccount(deps.db, orgId, member.id));
    if (!accountId) {
      return void res.status(409).json({ error: 'this member has no console identity; re-import the directory' });
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
      if (outcome.status === 'invalid') return void res.status(400).json({ error: 'unknown button' });
      if (outcome.status !== 'accepted') return void res.status(200).json({ id: null, note: outcome.note ?? null });
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
    if (rows.length === 0 && wait) {
      await deps.sender.waitForNext(15000);
      rows = await load();
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
    res.json({
      closed: closed.map((c) => ({ id: c.id.toString(), note: c.note })),
      messages: rows.map((r) => ({
        id: r.id.toString(),
        role: r.role,
        accountId: r.accountId,
        name: r.role === 'user' ? (nameOf.get(r.accountId) ?? '（不明なメンバー）') : null,
        text: r.text,
        ...optionsOf(r.options),
        at: r.sentAt.toISOString(),
      })),
    });
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
