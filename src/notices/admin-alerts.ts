import type { ChatSender, Platform } from '../core/chat';
import type { PromptSet } from '../brain/prompts';
import { personaMessage } from '../core/messages';
import type { Db } from '../db/prisma';
import type { Sql } from '../db/sql';
import { enqueueSelectCte, type ClaimedItem, type GaveUp, type WorkType } from '../queue/work-queue';
import type { NoticeDelivery } from './notice-delivery';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import { localMinute } from '../core/zoned-time';

/** What an admin alert is about (R-O5, seed 003 §4.7.3, §15.1). */
export type AlertKind =
  | 'llm_cost_limit'
  | 'daily_cost_budget'
  | 'db_outage'
  | 'db_recovered'
  | 'constitution_violation'
  | 'llm_latency_p95'
  | 'tool_error_rate'
  | 'confirmation_rate'
  | 'block_rate'
  | 'work_abandoned'
  | 'self_critique_concern'
  | 'adapter_down'
  | 'llm_unavailable';

export type AlertSeverity = 'info' | 'warn' | 'critical';

export interface AlertInput {
  kind: AlertKind;
  severity: AlertSeverity;
  /** Numbers and ids only (no message text): shown to admins and kept in `admin_alerts`. */
  facts: Record<string, string | number>;
  /** Only this organisation's admin rooms (default: every admin room). */
  orgId?: string;
}

/** An admin room: `rooms.adminAlerts` in the directory (one per platform). */
interface AdminRoom {
  platform: Platform;
  roomId: string;
  orgId: string;
}

export interface AdminAlertsOptions {
  db: Db;
  sql: Sql;
  logger: Logger;
  metrics?: Metrics;
  prompts: PromptSet;
  instanceId: string;
  /** One alert of a kind per window, across instances (repeats are counted, not sent). */
  windowMs: number;
  /** Platforms with an enabled adapter. */
  platforms: ReadonlySet<string>;
  /** The adapters' senders, for the one alert that cannot go through the database (its outage). */
  senders: ReadonlyMap<Platform, ChatSender>;
  /** Checks that a ChatWork room exists and the bot is in it (start-up warning otherwise). */
  chatworkRoomExists?: (roomId: string) => Promise<boolean>;
  onEnqueued?: (n: number) => void;
  now?: () => Date;
  /** The zone alert times are said in (BOT_TIMEZONE, as /admin shows them); default Asia/Tokyo. */
  timezone?: string;
}

/** Platforms by the name admins know them by. */
const ADAPTER_NAMES: Record<string, string> = { discord: 'Discord', chatwork: 'ChatWork', console: 'コンソール' };

const line = (label: string, value: string | number | undefined) =>
  value === undefined || value === '' ? null : `${label}: ${value}`;

/** A stored instant (ISO) as admins read it: `2026/11/29 06:27` in the service's zone; anything else as it is. */
function when(value: string | number | undefined, timezone: string): string | number | undefined {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(value)) return value;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? value : localMinute(at, timezone);
}

/**
 * The facts of an alert as the lines admins read (Japanese; numbers and ids only; times in `timezone`, no codes:
 * the kind is said in words).
 */
export function alertLines(
  kind: AlertKind,
  f: Record<string, string | number>,
  windowMinutes: number,
  timezone = 'Asia/Tokyo',
): string[] {
  const title: Record<AlertKind, string> = {
    llm_cost_limit: '本日のLLM利用額が上限に達しました（コストガードが作動）',
    daily_cost_budget: '本日のLLM利用額が予算を超えました',
    db_outage: 'データベースに接続できません',
    db_recovered: 'データベースへの接続が復旧しました',
    constitution_violation: 'LLMの憲法違反の可能性がある判断を検出しました',
    llm_latency_p95: 'LLMの応答時間（p95）がしきい値を超えています',
    tool_error_rate: 'ツール実行のエラー率がしきい値を超えています',
    confirmation_rate: '確認モードの発生率がしきい値を超えています',
    block_rate: 'ブロックの発生率がしきい値を超えています',
    work_abandoned: '処理をあきらめて失敗として終了した依頼があります',
    self_critique_concern: '自己批判（self-critique）が判断に懸念を示しました',
    adapter_down: 'チャットサービスとの接続が切れたままです（他のサービスは動いています）',
    llm_unavailable:
      'AIに接続できないため、会話に答えられません（利用者には「AIが使えない・管理者に連絡済み」と伝えています）',
  };
  const lines = [
    `種類: ${title[kind]}`,
    line('接続先', f.adapter !== undefined ? (ADAPTER_NAMES[f.adapter] ?? f.adapter) : undefined),
    line('値', f.value),
    line('しきい値', f.threshold),
    line('対象期間', f.windowMinutes !== undefined ? `直近${f.windowMinutes}分` : undefined),
    line('件数', f.count),
    line('サンプル数', f.samples),
    line('本日の利用額 (USD)', f.spentUsd),
    line('上限 (USD)', f.limitUsd),
    line('対応', f.action),
    line('理由コード', f.reasonCodes),
    line('ターンID', f.turnIds),
    line('発生時刻', when(f.since, timezone)),
    line('停止時間（分）', f.downMinutes),
    line('エラー', f.error),
    line('処理', f.work),
    line('エラーID', f.errorId),
    line('利用者への連絡', f.told),
    `同じ種類のアラートは${windowMinutes}分に1回だけ送ります。詳細は /admin で確認できます。`,
  ];
  return lines.filter((l): l is string => l !== null);
}

/** What each kind of work item is, for people (admin alerts and /admin). */
export const WORK_TYPE_LABELS: Record<WorkType, string> = {
  user_request: '会話への返答',
  notification: '通知',
  work: 'バックグラウンド処理',
};

/**
 * The `work_abandoned` alert of an item that gave up (SPEC §5): what it was, its error id, and whether the person is
 * being told. Every one is raised: the first of a window is sent, the others counted on it; /admin lists them all.
 */
export function gaveUpAlert(g: GaveUp): AlertInput {
  return {
    kind: 'work_abandoned',
    severity: 'warn',
    facts: {
      count: 1,
      work: WORK_TYPE_LABELS[g.type],
      errorId: g.errorId,
      told: g.apology
        ? 'お詫びとエラーIDを送ります'
        : g.kind === 'background_work'
          ? '依頼した人に作業が止まったことを報告します'
          : 'なし（/admin の失敗一覧を確認してください）',
    },
  };
}

/**
 * Admin alerts (R-O5): each kind at most once per window across instances (a unique row per kind and
 * window; repeats inside the window are counted on it), posted to every admin room as a `notification`
 * work item that the brain writes (NoticeDelivery). The database outage alert cannot use the database:
 * it goes straight to the adapters, once per window per instance, from the persona template.
 */
export class AdminAlerts {
  private rooms: AdminRoom[] = [];
  private outageSince: number | null = null;
  private outageAlertedAt = 0;

  constructor(private readonly o: AdminAlertsOptions) {}

  /**
   * Loads the admin rooms and warns about each one that cannot receive alerts (start-up). ChatWork rooms
   * are looked up in the background (the API may be slow); their warning follows shortly.
   */
  async start(): Promise<void> {
    await this.refreshRooms();
    if (this.rooms.length === 0) {
      this.o.logger.warn(
        { alert: 'config' },
        'no admin room in the directory (rooms: admin: true): admin alerts go to the log only',
      );
    }
    const all = await this.o.db.room.findMany({ where: { adminAlerts: true } });
    const lookups: Promise<void>[] = [];
    for (const r of all) {
      const where = `admin room ${r.platform} "${r.externalId}"`;
      if (!this.o.platforms.has(r.platform)) {
        this.o.logger.warn(
          { platform: r.platform, roomId: r.externalId },
          `${where}: ${r.platform} is not configured on any enabled adapter; its alerts go to the log only`,
        );
      } else if (r.platform === 'chatwork' && this.o.chatworkRoomExists) {
        lookups.push(
          this.o
            .chatworkRoomExists(r.externalId)
            .catch(() => false)
            .then((ok) => {
              if (!ok)
                this.o.logger.warn(
                  { platform: r.platform, roomId: r.externalId },
                  `${where} does not exist or the bot is not a member: alerts cannot be posted there`,
                );
            }),
        );
      }
    }
    void Promise.all(lookups);
  }

  async refreshRooms(): Promise<void> {
    const rows = await this.o.db.room.findMany({
      where: { adminAlerts: true, platform: { in: [...this.o.platforms] } },
    });
    this.rooms = rows.map((r) => ({ platform: r.platform as Platform, roomId: r.externalId, orgId: r.orgId }));
  }

  /** Raises an alert: sent once per window (whichever instance raises it first), counted after that. */
  async raise(a: AlertInput): Promise<'sent' | 'suppressed'> {
    const now = this.o.now?.() ?? new Date();
    const windowKey = String(Math.floor(now.getTime() / this.o.windowMs));
    this.o.logger.error({ alert: a.kind, severity: a.severity, ...a.facts }, `ADMIN ALERT: ${a.kind}`);
    const [r] = await this.o.sql<{ id: string; inserted: boolean; rooms: number }>(
      `WITH a AS (
         INSERT INTO admin_alerts (kind, "windowKey", severity, facts, "firedBy") VALUES ($1, $2, $3, $4::jsonb, $5)
         ON CONFLICT (kind, "windowKey") DO UPDATE SET repeats = admin_alerts.repeats + 1, "lastSeenAt" = now()
         RETURNING id, (xmax = 0) AS inserted),
       ${enqueueSelectCte(
         'ins',
         `
         SELECT 'notification',
                jsonb_build_object('kind', 'admin_alert', 'alertId', a.id::text, 'platform', r.platform, 'roomId',
                  r."externalId", 'orgId', r."orgId"),
                'alert:' || r.platform || ':' || r."externalId", 'alert:' || a.id::text || ':' || r.platform
                  || ':' || r."externalId", 5
         FROM a JOIN rooms r ON r."adminAlerts" AND r.platform = ANY($6::text[]) AND ($7::text IS NULL
           OR r."orgId" = $7)
         WHERE a.inserted`,
       )}
       SELECT a.id::text AS id, a.inserted, (SELECT count(*) FROM ins)::int AS rooms FROM a`,
      [
        a.kind,
        windowKey,
        a.severity,
        JSON.stringify(a.facts),
        this.o.instanceId,
        [...this.o.platforms],
        a.orgId ?? null,
      ],
    );
    const outcome = r?.inserted ? 'sent' : 'suppressed';
    this.o.metrics?.adminAlerts.inc({ kind: a.kind, outcome });
    if (r && r.rooms > 0) this.o.onEnqueued?.(r.rooms);
    return outcome;
  }

  /**
   * The database is unreachable (work queue, R-E2): once per window per instance, the persona template
   * goes straight to each admin room's adapter — nothing here touches the database.
   */
  databaseDown(error: string): void {
    const now = (this.o.now?.() ?? new Date()).getTime();
    this.outageSince ??= now;
    this.o.metrics?.databaseUp.set(0);
    if (now - this.outageAlertedAt < this.o.windowMs) return;
    this.outageAlertedAt = now;
    this.o.metrics?.adminAlerts.inc({ kind: 'db_outage', outcome: 'sent' });
    const facts = { since: new Date(this.outageSince).toISOString(), error };
    const text = personaMessage(this.o.prompts, 'notice.admin_alert_fallback', 'ja', {
      facts: alertLines('db_outage', facts, this.o.windowMs / 60000, this.o.timezone).join('\n'),
    });
    for (const room of this.rooms) {
      const sender = this.o.senders.get(room.platform);
      void sender
        ?.send({ platform: room.platform, roomId: room.roomId, text, kind: 'notice' })
        .catch((err: Error) =>
          this.o.logger.error({ roomId: room.roomId, err: err.name }, 'could not post the database outage alert'),
        );
    }
  }

  /** The database answers again after an outage: a recovery alert through the normal path. */
  databaseUp(): void {
    this.o.metrics?.databaseUp.set(1);
    if (this.outageSince === null) return;
    const since = this.outageSince;
    this.outageSince = null;
    this.outageAlertedAt = 0;
    const downMinutes = Math.max(1, Math.round(((this.o.now?.() ?? new Date()).getTime() - since) / 60000));
    void this.raise({
      kind: 'db_recovered',
      severity: 'info',
      facts: { since: new Date(since).toISOString(), downMinutes },
    }).catch((err: Error) => this.o.logger.warn({ err: err.name }, 'recovery alert failed'));
  }
}

/**
 * The `admin_alert` notification kind: the brain writes a stored alert for one admin room
 * (NoticeDelivery: persona, Guardian, once per room).
 */
export class AdminAlertNotices {
  constructor(
    private readonly o: { db: Db; prompts: PromptSet; delivery: NoticeDelivery; windowMs: number; timezone?: string },
  ) {}

  async handle(item: ClaimedItem): Promise<void> {
    const p = item.payload as { alertId: string; platform: Platform; roomId: string; orgId: string };
    const alert = await this.o.db.adminAlert.findUnique({ where: { id: BigInt(p.alertId) } });
    if (!alert) return;
    const facts = {
      title: '通知の内容: 管理者アラート',
      lines: alertLines(
        alert.kind as AlertKind,
        alert.facts as Record<string, string | number>,
        this.o.windowMs / 60000,
        this.o.timezone,
      ),
    };
    await this.o.delivery.deliver({
      kind: 'admin_alert',
      orgId: p.orgId,
      platform: p.platform,
      roomId: p.roomId,
      accountId: 'admin-alerts',
      memberId: null,
      reader: {
        known: true,
        memberId: null,
        name: '管理者の皆さん',
        level: 6,
        departmentId: null,
        departmentName: null,
        title: '管理者ルーム',
        preferences: {},
      },
      instruction: personaMessage(this.o.prompts, 'notice.admin_alert_task', 'ja'),
      facts,
      fallback: personaMessage(this.o.prompts, 'notice.admin_alert_fallback', 'ja', { facts: facts.lines.join('\n') }),
      ownFallback: true,
      // Asking the AI to write that the AI cannot be reached only waits for its failure.
      templateOnly: alert.kind === 'llm_unavailable',
      outboxKey: item.dedupeKey,
      mentionAccountIds: [],
      reasonCode: `A_${alert.kind.toUpperCase()}`,
      workItemId: item.id,
      claim: item,
    });
  }
}
