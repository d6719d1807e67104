import type { Sql } from '../../db/sql';
import { ABANDONED, failureOf, type WorkType } from '../../queue/work-queue';
import { WORK_TYPE_LABELS } from '../../notices/admin-alerts';

/** What a notification or background item was, by `payload.kind` (operators read Japanese, never a raw kind). */
const KIND_LABELS: Record<string, string> = {
  reminder: 'リマインダー',
  schedule: '定期通知',
  admin_alert: '管理者アラート',
  work_report: 'バックグラウンド処理の報告',
  task_due_changed: 'タスクの期限変更のお知らせ',
  apology: 'お詫びの連絡',
  background_work: 'バックグラウンド処理',
  conversation_summary: '会話の要約',
  self_critique: '自己批判（判断の見直し）',
};

/** Why it gave up, by error code (the recorded error text itself holds codes and internals: not shown). */
const CAUSE_LABELS: Record<string, string> = {
  EXTERNAL_API_FAILED: '連携先サービス（チャットワーク・Discord など）とのやり取りに失敗',
  DB_UNAVAILABLE: 'データベースに接続できない',
  SESSION_STATE_UNAVAILABLE: '会話の状態を読めない',
  LLM_UNAVAILABLE: 'AIが応答しない',
  LLM_UNREACHABLE: 'AIサービスに接続できない',
  LLM_NOT_CONFIGURED: 'AIの設定（キー・モデル）',
  LLM_RATE_LIMITED: 'AIの利用が集中している',
  LLM_TIMEOUT: 'AIの応答が時間切れ',
  LLM_INVALID_OUTPUT: 'AIの出力を読み取れない',
  LLM_COST_LIMIT: 'AIの利用上限',
  INTERNAL: '内部エラー',
};

/** One item that gave up, as /admin lists it (Japanese; ids and times, no error text). */
export interface FailedWork {
  id: string;
  errorId: string | null;
  what: string;
  cause: string;
  room: string | null;
  attempts: number;
  createdAt: Date;
  failedAt: Date | null;
  /**
   * Whether the person was told (the apology of a request, the report of background work): sent, not (yet) sent, or
   * nobody to tell for this kind of item.
   */
  told: '送信済み' | '未送信' | '対象外';
}

interface FailedRow {
  id: string;
  type: WorkType;
  kind: string | null;
  platform: string | null;
  room: string | null;
  errorId: string | null;
  lastError: string | null;
  attempts: number;
  createdAt: Date;
  finishedAt: Date | null;
  apology: string | null;
}

/** The items that gave up, newest first (SPEC §5: failed, listed, alerted). */
export async function failedWork(sql: Sql, limit = 100): Promise<FailedWork[]> {
  const rows = await sql<FailedRow>(
    `SELECT w.id::text AS id, w.type, w.payload->>'kind' AS kind,
            coalesce(w.payload->>'platform', w.payload->'message'->>'platform') AS platform,
            coalesce(w.payload->>'roomId', w.payload->'message'->>'roomId') AS room,
            w."errorId", w."lastError", w.attempts, w."createdAt", w."finishedAt",
            CASE WHEN w.type = 'user_request' THEN coalesce(o.status, 'none')
                 WHEN w.payload->>'kind' = 'background_work' THEN coalesce(r.status, 'none') END AS apology
     FROM work_items w LEFT JOIN outbound_messages o ON o."dedupeKey" = 'apology:' || w."dedupeKey"
       LEFT JOIN outbound_messages r ON r."dedupeKey" = 'notice:work:' || (w.payload->>'workId')
     WHERE w.state = 'failed' ORDER BY w."finishedAt" DESC NULLS LAST LIMIT $1`,
    [limit],
  );
  return rows.map((r) => {
    const code = failureOf(r.lastError ?? '').code;
    const abandoned = r.lastError?.includes(ABANDONED) === true;
    return {
      id: r.id,
      errorId: r.errorId,
      what: (r.kind && KIND_LABELS[r.kind]) || WORK_TYPE_LABELS[r.type] || 'その他の処理',
      cause: abandoned
        ? '処理中の停止が続いた'
        : (code && CAUSE_LABELS[code]) || (code ? 'その他のエラー' : '不明（ログをエラーIDで検索してください）'),
      room: r.platform && r.room ? `${r.platform}:${r.room}` : null,
      attempts: r.attempts,
      createdAt: r.createdAt,
      failedAt: r.finishedAt,
      told: r.apology === null ? '対象外' : r.apology === 'sent' ? '送信済み' : '未送信',
    };
  });
}
