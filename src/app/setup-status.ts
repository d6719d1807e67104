import type { LlmClient, LlmRequest, LlmResponse } from '../brain/llm-client';
import { LlmConnectionError, type LlmProblem } from '../brain/llm-connection';
import type { Env } from '../config/env';
import { proxyLabel } from '../core/outbound-http';
import type { Db } from '../db/prisma';
import type { Sql } from '../db/sql';
import type { AlertInput } from '../notices/admin-alerts';
import type { Logger } from '../observability/logger';
import type { SetupItem, SetupReport } from '../server/admin/setup-report';

/**
 * What is set up and what is not (issue 41), in one place: the AI (its key, and whether the model answers from
 * here), each chat service, the organisation directory, the admin token, the data folder and the proxy. At start it
 * logs one line for each thing missing and checks the AI with one cheap request; while running it watches the
 * model's answers, so a key that stops working or a network that loses its route is logged once (one sentence with
 * the cause and the fix), raised as an admin alert, and shown on /admin's overview.
 */
export type AiState =
  | { state: 'missing' }
  | { state: 'checking' }
  /** No start-up check ran (tests) and no turn has called the model yet. */
  | { state: 'unchecked' }
  | { state: 'ok'; at: Date }
  | { state: 'problem'; problem: LlmProblem; since: Date };

/** What the report reads of the running service, filled in as the parts start. */
export interface SetupParts {
  /** The adapters' state (up/down) and why one is down, in Japanese. */
  adapters?: () => { platform: string; state: 'up' | 'down'; reasonJa: string | null }[];
  /** ChatWork's bot account once GET /me answered. */
  chatworkAccount?: () => string | undefined;
}

const SAMPLE = { id: 'acme', name: '株式会社アクメ' };

export class SetupStatus {
  private ai: AiState;
  /** The start-up check, when one runs (tests wait for it). */
  aiChecked: Promise<void> = Promise.resolve();
  readonly parts: SetupParts = {};

  constructor(
    private readonly o: {
      config: Readonly<Env>;
      logger: Logger;
      db: Db;
      sql: Sql;
      raise: (a: AlertInput) => void;
      /** The embedded database's data folder, or null for DATABASE_URL. */
      dataDir: string | null;
      now?: () => Date;
    },
  ) {
    this.ai = o.config.ANTHROPIC_API_KEY ? { state: 'unchecked' } : { state: 'missing' };
  }

  private now(): Date {
    return this.o.now?.() ?? new Date();
  }

  /**
   * The model client, watched: a setup failure is recorded (once per cause), an answer after one clears it. The
   * start-up check goes to `checker` (the client itself, unwrapped by tracing).
   */
  watch(llm: LlmClient, checker: LlmClient = llm): LlmClient {
    return {
      create: async (req: LlmRequest): Promise<LlmResponse> => {
        try {
          const res = await llm.create(req);
          this.answered();
          return res;
        } catch (err) {
          if (err instanceof LlmConnectionError) this.failed(err.problem);
          throw err;
        }
      },
      ...(checker.check ? { check: (model: string) => checker.check!(model) } : {}),
    };
  }

  /** Checks the model with one cheap request, in the background (start-up does not wait for the network). */
  checkAi(llm: LlmClient | null): void {
    if (!llm?.check) return;
    const started = performance.now();
    const model = this.o.config.ANTHROPIC_MODEL;
    this.ai = { state: 'checking' };
    this.aiChecked = llm.check(model).then(
      () => {
        const ms = Math.round(performance.now() - started);
        this.o.logger.info({ model, ms }, `AI connection checked: the model ${model} answers (${ms} ms)`);
        this.answered(true);
      },
      (err: unknown) => {
        if (err instanceof LlmConnectionError) return this.failed(err.problem);
        // Busy or failing for a moment (429, 5xx): not a setup problem; turns will tell.
        this.o.logger.warn({ err: (err as Error).message }, 'AI connection check: the API is busy or failing now');
        if (this.ai.state === 'checking') this.ai = { state: 'unchecked' };
      },
    );
  }

  private answered(quiet = false): void {
    const was = this.ai;
    this.ai = { state: 'ok', at: this.now() };
    if (was.state === 'problem' && !quiet) this.o.logger.info('AI connection works again: the model answers');
  }

  private failed(problem: LlmProblem): void {
    const was = this.ai;
    if (was.state === 'problem' && was.problem.en === problem.en) return;
    this.ai = { state: 'problem', problem, since: this.now() };
    this.o.logger.error({ cause: problem.cause }, `AI connection failed: ${problem.en}`);
    this.o.raise({
      kind: 'llm_unavailable',
      severity: 'critical',
      facts: { error: problem.ja, since: this.ai.since.toISOString() },
    });
  }

  /** The start-up lines for what is missing (each a warning with what to set). */
  async logMissing(): Promise<void> {
    const { config: c, logger } = this.o;
    const chatwork = Boolean(c.CHATWORK_API_TOKEN && c.CHATWORK_WEBHOOK_TOKEN);
    const discord = Boolean(c.DISCORD_BOT_TOKEN && c.DISCORD_ENABLED);
    if (!c.ANTHROPIC_API_KEY) {
      logger.warn(
        'ANTHROPIC_API_KEY unset: the bot cannot think and answers every message with a setup reply; set it in .env ' +
          'and restart',
      );
      // People in a chat room hear "the administrator has been told": tell them (the console shows its own hint).
      if (chatwork || discord)
        this.o.raise({
          kind: 'llm_unavailable',
          severity: 'critical',
          facts: { error: 'AIのキーが設定されていません: .env に設定して再起動してください。' },
        });
    }
    if (Boolean(c.CHATWORK_API_TOKEN) !== Boolean(c.CHATWORK_WEBHOOK_TOKEN)) {
      const missing = c.CHATWORK_API_TOKEN ? 'CHATWORK_WEBHOOK_TOKEN' : 'CHATWORK_API_TOKEN';
      logger.warn(`ChatWork is off: no ${missing} (CHATWORK_API_TOKEN and CHATWORK_WEBHOOK_TOKEN are both needed)`);
    } else if (!chatwork && !discord)
      logger.warn(
        'no chat service is set up (CHATWORK_API_TOKEN and CHATWORK_WEBHOOK_TOKEN, or DISCORD_BOT_TOKEN): only the ' +
          'local console answers',
      );
    if (await this.sampleDirectory())
      logger.warn(
        `the sample organisation directory (${SAMPLE.name}) is in use: set ORG_DIRECTORY_FILE in .env to your own ` +
          'and restart (or `npm run org:import -- FILE` with DATABASE_URL)',
      );
    const proxy = proxyLabel('https:');
    if (proxy) logger.info({ proxy }, `outbound calls go through the proxy ${proxy}`);
  }

  private async sampleDirectory(): Promise<boolean> {
    if (this.o.config.ORG_DIRECTORY_FILE) return false;
    const org = await this.o.db.organization.findFirst({
      orderBy: { createdAt: 'asc' },
      select: { id: true, name: true },
    });
    return org?.id === SAMPLE.id && org.name === SAMPLE.name;
  }

  /** The setup section of /admin's overview. */
  async report(): Promise<SetupReport> {
    const c = this.o.config;
    const items: SetupItem[] = [this.aiItem()];
    const adapters = this.parts.adapters?.() ?? [];
    const adapter = (p: string) => adapters.find((a) => a.platform === p);

    // ChatWork
    if (c.CHATWORK_API_TOKEN && c.CHATWORK_WEBHOOK_TOKEN) {
      const account = this.parts.chatworkAccount?.();
      items.push(
        account
          ? { key: 'chatwork', label: 'ChatWork', state: 'ok', text: `接続済み（ボットのアカウント番号 ${account}）` }
          : {
              key: 'chatwork',
              label: 'ChatWork',
              state: 'problem',
              text: 'ボットのアカウントを確認できていません（ChatWork が応答しないか、API トークンが誤っています）。',
            },
      );
    } else if (c.CHATWORK_API_TOKEN || c.CHATWORK_WEBHOOK_TOKEN) {
      const missing = c.CHATWORK_API_TOKEN ? 'Webhook トークン' : 'API トークン';
      items.push({
        key: 'chatwork',
        label: 'ChatWork',
        state: 'problem',
        text: `${missing}が未設定のため使えません。`,
      });
    } else
      items.push({
        key: 'chatwork',
        label: 'ChatWork',
        state: 'off',
        text: '未設定（API トークンと Webhook トークン）',
      });

    // Discord
    const d = adapter('discord');
    if (d)
      items.push(
        d.state === 'up'
          ? { key: 'discord', label: 'Discord', state: 'ok', text: '接続中' }
          : { key: 'discord', label: 'Discord', state: 'problem', text: d.reasonJa ?? '接続できていません。' },
      );
    else
      items.push({
        key: 'discord',
        label: 'Discord',
        state: 'off',
        text: c.DISCORD_BOT_TOKEN ? 'トークンはありますが、無効にしてあります。' : '未設定（ボットのトークン）',
      });
    const consoleOn = adapter('console') !== undefined;
    items.push({
      key: 'console',
      label: 'コンソール',
      state: consoleOn ? 'ok' : 'off',
      text: consoleOn ? '有効（/console）' : '無効',
    });

    items.push(await this.directoryItem());
    items.push({
      key: 'admin',
      label: '管理画面の鍵',
      state: 'ok',
      text: '設定済み（この画面が開けています）',
    });
    items.push(this.dataItem());
    const proxy = proxyLabel('https:');
    items.push({
      key: 'proxy',
      label: 'プロキシ',
      state: proxy ? 'ok' : 'off',
      text: proxy ? `${proxy} 経由で外部に接続` : 'なし（直接接続）',
    });
    return { items, today: await this.today() };
  }

  private aiItem(): SetupItem {
    const label = 'AI（Anthropic）';
    const a = this.ai;
    const model = this.o.config.ANTHROPIC_MODEL;
    switch (a.state) {
      case 'missing':
        return {
          key: 'ai',
          label,
          state: 'problem',
          text: 'AIのキーが未設定です。.env に設定して再起動してください。',
        };
      case 'checking':
        return { key: 'ai', label, state: 'warn', text: `モデル ${model} への接続を確認しています。` };
      case 'unchecked':
        return { key: 'ai', label, state: 'warn', text: `モデル ${model} への接続はまだ確かめていません。` };
      case 'ok':
        return { key: 'ai', label, state: 'ok', text: `モデル ${model} が応答しています。` };
      case 'problem':
        return { key: 'ai', label, state: 'problem', text: a.problem.ja };
    }
  }

  private async directoryItem(): Promise<SetupItem> {
    const label = '組織ディレクトリ';
    const org = await this.o.db.organization.findFirst({
      orderBy: { createdAt: 'asc' },
      select: { id: true, name: true },
    });
    if (!org) return { key: 'directory', label, state: 'problem', text: '組織が登録されていません。' };
    const [members, rooms, adminRooms] = await Promise.all([
      this.o.db.member.count({ where: { orgId: org.id, active: true } }),
      this.o.db.room.count({ where: { orgId: org.id } }),
      this.o.db.room.count({ where: { orgId: org.id, adminAlerts: true } }),
    ]);
    const sample = !this.o.config.ORG_DIRECTORY_FILE && org.id === SAMPLE.id && org.name === SAMPLE.name;
    const counts = `${org.name}: メンバー ${members} 人、ルーム ${rooms} 件`;
    if (sample)
      return {
        key: 'directory',
        label,
        state: 'warn',
        text: `サンプル組織（${SAMPLE.name}）のままです。自社の組織ファイルを .env で指定して、起動し直してください。`,
      };
    if (adminRooms === 0)
      return {
        key: 'directory',
        label,
        state: 'warn',
        text: `${counts}。管理者ルーム（admin: true）がないため、アラートはログにだけ出ます。`,
      };
    return { key: 'directory', label, state: 'ok', text: counts };
  }

  private dataItem(): SetupItem {
    const label = 'データの保存先';
    if (this.o.dataDir)
      return {
        key: 'data',
        label,
        state: 'ok',
        text: `${this.o.dataDir}（内蔵 PostgreSQL）。バックアップ: npm run backup`,
      };
    let where = '接続先';
    try {
      const u = new URL(this.o.config.DATABASE_URL ?? '');
      where = `${u.hostname}:${u.port || '5432'}${u.pathname}`;
    } catch {
      // the configuration check has validated it
    }
    return { key: 'data', label, state: 'ok', text: `外部の PostgreSQL（${where}）。バックアップ: npm run backup` };
  }

  /** Today's user turns in BOT_TIMEZONE, and those the AI could not answer because it is not set up or reachable. */
  private async today(): Promise<{ turns: number; aiFailed: number }> {
    const [r] = await this.o.sql<{ turns: number; failed: number }>(
      `SELECT count(*)::int AS turns,
              count(*) FILTER (WHERE "reasonCode" IN ('LLM_NOT_CONFIGURED', 'LLM_UNREACHABLE'))::int AS failed
         FROM turn_records
        WHERE kind = 'user_request'
          AND "createdAt" >= (date_trunc('day', $2::timestamptz AT TIME ZONE $1) AT TIME ZONE $1)`,
      [this.o.config.BOT_TIMEZONE, this.now().toISOString()],
    );
    return { turns: r?.turns ?? 0, aiFailed: r?.failed ?? 0 };
  }
}
