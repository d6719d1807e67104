import fs from 'node:fs';
import path from 'node:path';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import type { Db } from '../../db/prisma';
import type { Sql } from '../../db/sql';
import type { Logger } from '../../observability/logger';
import type { NoticeScheduler } from '../../scheduler/notices/notice-scheduler';
import { safeNext, type AdminAuth } from '../admin-auth';
import { requestGuard } from '../request-guard';
import {
  auditLog,
  constitutionAudits,
  lastRuns,
  overview,
  pendingConfirmations,
  roomLabels,
  scopeView,
  turnDetail,
} from './admin-queries';
import { auditCsv } from './audit-csv';
import { costPanel } from './cost-panel';
import { formatCost } from './format';
import { DAY_EXAMPLE, readDay } from './day-input';
import { memberList, memberProfile, policyList, roomList, roomProfile } from './directory-views';
import { pageLabels } from './labels';
import { readArtifact } from '../../work/artifacts';
import { failedWork } from './failed-work';
import { alertLines, type AlertKind } from '../../notices/admin-alerts';
import type { SetupReport } from './setup-report';
import { mcpServerViews, type AdminMcp } from './mcp-tools-view';

export interface AdminDeps {
  db: Db;
  sql: Sql;
  auth: AdminAuth;
  logger: Logger;
  timezone: string;
  /** Yen per dollar of the cost panel (COST_JPY_PER_USD). */
  jpyPerUsd?: number;
  scheduler: () => NoticeScheduler | null;
  now?: () => Date;
  /** What is set up and what is not (the overview's setup section; app/setup-status.ts). */
  setup?: () => Promise<SetupReport>;
  /** The company tools of the directory's MCP servers and their approval (issue 42); absent when none is declared. */
  mcp?: AdminMcp;
}

const read = (f: string) => fs.readFileSync(path.join(__dirname, f), 'utf8');
const PAGE = read('admin.html');
const SCRIPT = read('admin.js');
const FORMAT = read('format.js');
const LOGIN = read('login.html');
const UPLOT_JS = fs.readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8');
const UPLOT_CSS = fs.readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8');

/** The login page with an optional error line and the page to return to (both escaped). */
export function loginPage(error: string | null, next: string): string {
  const esc = (s: string) =>
    s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
  return LOGIN.replace('<!--error-->', error ? `<p class="error" role="alert">${esc(error)}</p>` : '').replace(
    '<!--next-->',
    esc(safeNext(next)),
  );
}

/** A day typed in the filter (2026/11/28, 2026年11月28日 …) as `YYYY-MM-DD`; an empty field is no filter. */
const ZDay = z
  .string()
  .max(30)
  .transform((text, ctx) => {
    if (text.trim() === '') return undefined;
    const day = readDay(text);
    if (day) return `${day.y}-${String(day.m).padStart(2, '0')}-${String(day.d).padStart(2, '0')}`;
    ctx.addIssue({ code: 'custom', message: 'day' });
    return z.NEVER;
  });

const ZAudit = z.object({
  person: z.string().max(100).optional(),
  room: z.string().max(100).optional(),
  reason: z
    .string()
    .max(60)
    .regex(/^[A-Za-z0-9_]*$/)
    .optional(),
  decision: z
    .string()
    .max(40)
    .regex(/^[A-Z_]*$/)
    .optional(),
  kind: z.enum(['user_request', 'notification', 'work']).optional(),
  from: ZDay.optional(),
  to: ZDay.optional(),
  before: z.string().max(30).optional(),
  q: z.string().max(100).optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
});

/** The audit filter's fields as the form names them (for an error message). */
const AUDIT_FIELDS: Record<string, string> = {
  person: '人',
  room: 'ルーム',
  reason: '理由',
  decision: '判断',
  kind: '種類',
  from: '開始日',
  to: '終了日',
  before: 'ページ',
  q: '本文',
  limit: '件数',
};

/** What the cost guard did when the daily limit was reached (LLM_COST_LIMIT_ACTION), for the alerts page. */
const COST_ACTIONS: Record<string, string> = {
  fallback_model: '安いモデルに切り替えて続けた',
  refuse: '返答を止めた',
};

/** Security headers of every admin response: no caching, no framing, scripts from this origin only. */
function hardened(_req: Request, res: Response, next: NextFunction): void {
  res.set({
    'cache-control': 'no-store',
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
    'content-security-policy':
      "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
      "frame-ancestors 'none'; form-action 'self'",
  });
  next();
}

/**
 * The operator's dashboard (R-O4): `/admin` pages (login page → session cookie) and the JSON API under
 * `/admin/api/` (`Authorization: Bearer ADMIN_TOKEN` or the session). Without ADMIN_TOKEN it answers 404.
 */
export function createAdminRouter(deps: AdminDeps): Router {
  const r = express.Router();
  if (!deps.auth.configured) {
    // Worded so that the log's secret redaction ("token is <value>") leaves it readable.
    deps.logger.warn('ADMIN_TOKEN unset: /admin is off (it answers 404)');
    r.use('/admin', (_req, res) => {
      res.status(404).type('text/plain').send('Not found');
    });
    return r;
  }
  const now = () => deps.now?.() ?? new Date();
  r.use('/admin', hardened, requestGuard({ allowedHosts: [], allowRemote: true, anyHost: true, surface: 'admin' }));
  r.get('/admin/login', (req, res) => {
    res.type('html').send(loginPage(null, String(req.query.next ?? '')));
  });
  r.use(deps.auth.routes(loginPage));
  r.get('/admin/assets/uplot.js', (_req, res) => {
    res.type('js').send(UPLOT_JS);
  });
  r.get('/admin/assets/uplot.css', (_req, res) => {
    res.type('css').send(UPLOT_CSS);
  });
  r.get('/admin/assets/format.js', deps.auth.require('api'), (_req, res) => {
    res.type('js').send(FORMAT);
  });
  r.get('/admin/assets/admin.js', deps.auth.require('api'), (_req, res) => {
    res.type('js').send(SCRIPT);
  });
  r.get('/admin', deps.auth.require('page'), (_req, res) => {
    res.type('html').send(PAGE);
  });

  const api = express.Router();
  api.use(deps.auth.require('api'));
  api.get('/labels', (_req, res) => {
    res.json({ timezone: deps.timezone, ...pageLabels() });
  });
  api.get('/overview', async (req, res) => {
    const range = req.query.range ?? '24h';
    if (range !== '24h' && range !== '30d')
      return void res.status(400).json({ error: '期間は「24時間」か「30日」を選んでください。' });
    const [o, failed] = await Promise.all([overview(deps.sql, range, now(), deps.timezone), failedWork(deps.sql)]);
    res.json({ range, timezone: deps.timezone, ...o, failedCount: failed.length });
  });
  api.get('/setup', async (_req, res) => {
    res.json(deps.setup ? await deps.setup() : { items: [], today: { turns: 0, aiFailed: 0 } });
  });
  api.get('/cost', async (req, res) => {
    const range = req.query.range ?? '24h';
    if (range !== '24h' && range !== '30d')
      return void res.status(400).json({ error: '期間は「24時間」か「30日」を選んでください。' });
    res.json(await costPanel(deps.sql, range, now(), deps.timezone, deps.jpyPerUsd ?? 150));
  });
  const auditFilter = (req: Request, res: Response) => {
    const f = ZAudit.safeParse(req.query);
    if (f.success) return f.data;
    const fields = [...new Set(f.error.issues.map((i) => String(i.path[0])))];
    const days = fields.filter((k) => k === 'from' || k === 'to');
    res.status(400).json({
      error: days.length
        ? `${days.map((k) => AUDIT_FIELDS[k]).join('と')}は ${DAY_EXAMPLE} のように年/月/日の順で入力してください。`
        : `検索条件を読めませんでした（${fields.map((k) => AUDIT_FIELDS[k] ?? '条件').join('・')}）。` +
          '入力を直して検索し直してください。',
    });
    return null;
  };
  api.get('/audit', async (req, res) => {
    const f = auditFilter(req, res);
    if (f) res.json({ turns: await auditLog(deps.db, f, deps.timezone) });
  });
  // The filtered audit as CSV (UTF-8 with a BOM so that Excel reads it), up to 10,000 rows.
  api.get('/audit.csv', async (req, res) => {
    const f = auditFilter(req, res);
    if (!f) return;
    const rows = await auditLog(deps.db, { ...f, limit: 10_000, max: 10_000 }, deps.timezone);
    res
      .type('text/csv; charset=utf-8')
      .set('content-disposition', `attachment; filename="hisho-audit-${now().toISOString().slice(0, 10)}.csv"`)
      .send(auditCsv(rows, deps.timezone));
  });
  api.get('/turns/:id', async (req, res) => {
    const id = String(req.params.id);
    const missing = 'このターンIDの記録はありません。監査ログで検索し、行をクリックして開いてください。';
    if (!/^[\w-]{1,80}$/.test(id)) return void res.status(404).json({ error: missing });
    const serverName = (server: string) => deps.mcp?.status().find((t) => t.serverId === server)?.serverName;
    const turn = await turnDetail(deps.db, id, deps.timezone, now(), serverName);
    if (!turn) return void res.status(404).json({ error: missing });
    res.json({ turn });
  });
  // The directory, read-only (the directory file is where it is edited).
  api.get('/members', async (_req, res) => {
    res.json({ members: await memberList(deps.db) });
  });
  api.get('/rooms', async (_req, res) => {
    res.json({ rooms: await roomList(deps.db, deps.sql, now()) });
  });
  api.get('/policies', async (_req, res) => {
    res.json({ policies: await policyList(deps.db) });
  });
  api.get('/members/:id', async (req, res) => {
    const id = String(req.params.id);
    const [view, profile] = await Promise.all([
      scopeView(deps.db, deps.sql, { memberId: id }, now(), deps.timezone),
      memberProfile(deps.db, id),
    ]);
    if (!view || !profile)
      return void res
        .status(404)
        .json({ error: 'この人はディレクトリにいません。「メンバー」の一覧か監査ログの人の名前から開いてください。' });
    res.json({ ...view, profile });
  });
  api.get('/rooms/:id', async (req, res) => {
    const id = String(req.params.id);
    const [view, profile] = await Promise.all([
      scopeView(deps.db, deps.sql, { roomId: id }, now(), deps.timezone),
      roomProfile(deps.db, id),
    ]);
    if (!view)
      return void res
        .status(404)
        .json({ error: 'このルームの記録はありません。「ルーム」の一覧か監査ログのルーム名から開いてください。' });
    res.json({ ...view, profile });
  });
  api.get('/pending', async (_req, res) => {
    res.json({ pending: await pendingConfirmations(deps.db, now()) });
  });
  api.get('/schedules', async (_req, res) => {
    const [rows, runs] = await Promise.all([
      deps.db.schedule.findMany({ where: { source: 'directory' }, orderBy: { id: 'asc' } }),
      lastRuns(deps.db),
    ]);
    const live = new Map((deps.scheduler()?.statuses() ?? []).map((s) => [s.id, s]));
    const names = await roomLabels(
      deps.db,
      rows.flatMap((s) => (s.roomId ? [s.roomId] : [])),
    );
    res.json({
      running: deps.scheduler() !== null,
      schedules: rows.map((s) => ({
        id: s.id,
        kind: s.kind,
        cron: s.cron,
        timezone: s.timezone,
        room: s.platform && s.roomId ? (names.get(s.roomId) ?? s.roomId) : null,
        enabled: s.enabled,
        problem: live.get(s.id)?.problem ?? null,
        nextRun: live.get(s.id)?.nextRun ?? null,
        lastRun: runs.get(s.id) ?? null,
      })),
    });
  });
  api.get('/audits/constitution', async (req, res) => {
    const days = Number(req.query.days ?? 7);
    if (!Number.isInteger(days) || days < 1 || days > 90)
      return void res.status(400).json({ error: '日数は1〜90で指定してください。' });
    res.json({ days, ...(await constitutionAudits(deps.sql, days)) });
  });
  api.get('/alerts', async (_req, res) => {
    const rows = await deps.db.adminAlert.findMany({ orderBy: { createdAt: 'desc' }, take: 100 });
    res.json({
      alerts: rows.map((a) => {
        const facts = { ...((a.facts ?? {}) as Record<string, string | number>) };
        // Amounts in the page's one cost format, the cost guard's action in words.
        for (const k of ['spentUsd', 'limitUsd'])
          if (facts[k] !== undefined && Number.isFinite(Number(facts[k]))) facts[k] = formatCost(facts[k]);
        const usd = /^([\d.]+) USD$/.exec(String(facts.threshold ?? ''));
        if (usd) facts.threshold = formatCost(usd[1]);
        if (facts.action !== undefined) facts.action = COST_ACTIONS[String(facts.action)] ?? String(facts.action);
        const lines = alertLines(a.kind as AlertKind, facts, 0, deps.timezone);
        return {
          id: a.id.toString(),
          createdAt: a.createdAt,
          severity: a.severity,
          repeats: a.repeats,
          title: (lines[0] ?? '').replace(/^種類: /, ''),
          // The facts in words; codes and ids are for the inspector, not this list.
          lines: lines.slice(1, -1).filter((l) => !/^(理由コード|ターンID):/.test(l)),
        };
      }),
    });
  });
  api.get('/failed', async (_req, res) => {
    res.json({ failed: await failedWork(deps.sql) });
  });
  // Read-only view of an artifact made by background work (the completion report links here, R-W2).
  api.get('/artifacts/:id', async (req, res) => {
    const id = String(req.params.id);
    const missing = 'この成果物はありません。完了報告のリンクから開いてください。';
    if (!/^[0-9a-f-]{36}$/.test(id)) return void res.status(404).json({ error: missing });
    const artifact = await readArtifact(deps.db, null, id);
    if (!artifact) return void res.status(404).json({ error: missing });
    res.json({ artifact });
  });
  // Company tools (MCP): each declared tool, its policy and state; approving pins what the server lists now.
  api.get('/mcp', (_req, res) => {
    res.json({ servers: deps.mcp ? mcpServerViews(deps.mcp.status()) : [] });
  });
  api.post('/mcp/:server/approve', async (req, res) => {
    const server = String(req.params.server);
    const known = deps.mcp?.status().some((t) => t.serverId === server);
    if (!deps.mcp || !known)
      return void res.status(404).json({ error: 'このサーバーはディレクトリにありません。一覧から選んでください。' });
    if (!(await deps.mcp.approve(server, 'admin')))
      return void res.status(409).json({
        error: 'サーバーにつながらないため承認できません。サーバーが動いているか確かめてから、もう一度押してください。',
      });
    deps.logger.info({ mcpServer: server }, 'MCP server tools approved in /admin');
    res.json({ servers: mcpServerViews(deps.mcp.status()) });
  });
  api.use((_req, res) => {
    res.status(404).json({ error: 'このページはありません。上のメニューから選んでください。' });
  });
  r.use('/admin/api', api);
  return r;
}
