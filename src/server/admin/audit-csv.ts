import { zonedParts } from '../../core/zoned-time';
import type { AuditRow } from './admin-queries';
import { DECIDER_LABELS, DECISION_TEXT, KIND_LABELS, reasonInfo } from './labels';

/** One CSV field: quoted when it holds a comma, quote or line break; a leading =+-@ cannot start a formula. */
function field(v: unknown): string {
  let s = v === null || v === undefined ? '' : String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** `YYYY/MM/DD HH:mm:ss` in the organisation's time zone (zones' offsets are whole minutes: the seconds are UTC's). */
function local(at: Date, timezone: string): string {
  const p = zonedParts(at, timezone);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${p.y}/${two(p.m)}/${two(p.d)} ${two(p.hh)}:${two(p.mm)}:${two(at.getUTCSeconds())}`;
}

/**
 * The filtered audit log as CSV for Excel: UTF-8 with a byte-order mark, CRLF lines, Japanese headings
 * and words instead of codes (the code kept in its own column for searches), times in the organisation's
 * time zone. Texts are the redacted ones the audit stores.
 */
export function auditCsv(rows: AuditRow[], timezone: string): string {
  const head = [
    '日時',
    '種類',
    '人',
    'ルーム',
    '判断',
    '理由',
    '理由の説明',
    '次にすること',
    '理由コード',
    '決定者',
    '処理時間（ミリ秒）',
    '費用（USD）',
    '依頼',
    '返答',
    'ターンID',
  ];
  const lines = rows.map((r) => {
    const why = reasonInfo(r.reasonCode);
    return [
      local(r.createdAt, timezone),
      KIND_LABELS[r.kind] ?? 'その他',
      r.member ?? '',
      r.room,
      DECISION_TEXT[r.decision] ?? r.decision,
      why?.label ?? '',
      why?.explain ?? '',
      why?.next ?? '',
      r.reasonCode,
      DECIDER_LABELS[String(r.finalDecider)] ?? '',
      r.totalMs,
      r.costUsd.toFixed(6),
      r.input ?? '',
      r.reply ?? '',
      r.id,
    ]
      .map(field)
      .join(',');
  });
  return `\uFEFF${[head.join(','), ...lines].join('\r\n')}\r\n`;
}
