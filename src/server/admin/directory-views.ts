/**
 * The organisation directory as /admin shows it (read-only: the directory file stays the one place to edit,
 * `npm run org:import`): members, rooms and policies in words — departments by name, levels with what they
 * may see, linked chat services, rules in sentences — never ids or codes.
 */
import type { Db } from '../../db/prisma';
import type { Sql } from '../../db/sql';
import type { PolicyRule } from '../../org/directory.schema';
import { noticesEnabled, type PreferenceRow } from '../../scheduler/notices/preferences';
import { LEVEL_LABELS, PLATFORM_LABELS, TOOL_LABELS } from './labels';

const DAY = 24 * 3_600_000;

export interface MemberRow {
  id: string;
  name: string;
  reading: string | null;
  department: string | null;
  title: string | null;
  level: number;
  levelLabel: string;
  accounts: string[];
  active: boolean;
}

/** Department names from the root down (「営業部 › 東京営業課」), by organisation and id. */
async function departmentPaths(db: Db): Promise<(orgId: string, id: string | null) => string | null> {
  const rows = await db.department.findMany({ select: { orgId: true, id: true, name: true, parentId: true } });
  const byKey = new Map(rows.map((d) => [`${d.orgId}:${d.id}`, d]));
  return (orgId, id) => {
    const names: string[] = [];
    const seen = new Set<string>();
    for (let d = id ? byKey.get(`${orgId}:${id}`) : undefined; d && !seen.has(d.id);) {
      seen.add(d.id);
      names.unshift(d.name);
      d = d.parentId ? byKey.get(`${orgId}:${d.parentId}`) : undefined;
    }
    return names.length ? names.join(' › ') : null;
  };
}

/** Linked chat services in words, in a fixed order (ChatWork, Discord, console). */
function services(accounts: { platform: string }[]): string[] {
  return Object.keys(PLATFORM_LABELS)
    .filter((p) => accounts.some((a) => a.platform === p))
    .map((p) => PLATFORM_LABELS[p]!);
}

const levelLabel = (level: number) => `${level}（${LEVEL_LABELS[level]?.label ?? '不明'}）`;

/** Every member: active ones first, then by department, level (highest first) and reading. */
export async function memberList(db: Db): Promise<MemberRow[]> {
  const [members, path] = await Promise.all([
    db.member.findMany({ include: { accounts: { select: { platform: true } } } }),
    departmentPaths(db),
  ]);
  const ja = new Intl.Collator('ja');
  return members
    .map((m) => ({
      id: m.id,
      name: m.name,
      reading: m.reading,
      department: path(m.orgId, m.departmentId),
      title: m.title,
      level: m.level,
      levelLabel: levelLabel(m.level),
      accounts: services(m.accounts),
      active: m.active,
    }))
    .sort(
      (a, b) =>
        Number(b.active) - Number(a.active) ||
        ja.compare(a.department ?? '\uffff', b.department ?? '\uffff') ||
        b.level - a.level ||
        ja.compare(a.reading ?? a.name, b.reading ?? b.name),
    );
}

/** What a member's page adds about the person: the directory's facts and the rooms they talked in. */
export async function memberProfile(db: Db, memberId: string): Promise<Record<string, unknown> | null> {
  const m = await db.member.findFirst({
    where: { id: memberId },
    include: { accounts: { select: { platform: true } } },
  });
  if (!m) return null;
  const [path, spoken, prefs] = await Promise.all([
    departmentPaths(db),
    db.turnRecord.findMany({
      where: { memberId },
      distinct: ['platform', 'roomId'],
      select: { platform: true, roomId: true },
    }),
    db.noticePreference.findMany({ where: { orgId: m.orgId, memberId } }),
  ]);
  const rooms = await db.room.findMany({
    where: { OR: spoken.map((r) => ({ platform: r.platform, externalId: r.roomId })) },
    select: { platform: true, externalId: true, name: true },
  });
  const named = new Map(rooms.map((r) => [`${r.platform}:${r.externalId}`, r.name]));
  return {
    name: m.name,
    reading: m.reading,
    aliases: m.aliases,
    department: path(m.orgId, m.departmentId),
    title: m.title,
    level: levelLabel(m.level),
    scope: LEVEL_LABELS[m.level]?.scope ?? '不明',
    accounts: services(m.accounts),
    active: m.active,
    notices: noticesInWords(m.noticesOptOut, prefs),
    quietHours: m.quietHours ? m.quietHours.replace('-', '〜') : null,
    rooms: spoken.map((r) => ({
      id: r.roomId,
      name: named.get(`${r.platform}:${r.roomId}`) || null,
      service: PLATFORM_LABELS[r.platform] ?? 'その他',
    })),
  };
}

const NOTICE_KINDS: Readonly<Record<string, string>> = {
  daily_digest: '日次のまとめ',
  deadline_reminder: '期限のお知らせ',
  goal_checkin: '目標の振り返り',
};

/** Which scheduled notices a member receives (their own choices over the directory's default) and who chose. */
function noticesInWords(directoryOptOut: boolean, prefs: PreferenceRow[]): string {
  const on = Object.keys(NOTICE_KINDS).filter((k) => noticesEnabled(directoryOptOut, prefs, k));
  const which =
    on.length === Object.keys(NOTICE_KINDS).length
      ? '受け取る'
      : on.length === 0
        ? '受け取らない'
        : `${on.map((k) => NOTICE_KINDS[k]).join('・')}だけ受け取る`;
  return `${which}${prefs.length ? '（本人の設定）' : directoryOptOut ? '（ディレクトリの設定）' : ''}`;
}

/** A room's directory facts in words (a room the directory does not list has none). */
function roomFacts(r: { platform: string; authority: string; noticesEnabled: boolean; adminAlerts: boolean }) {
  return {
    service: PLATFORM_LABELS[r.platform] ?? 'その他',
    authority: r.authority === 'public' ? '公開（組織外の人も話せる・会話のみ）' : '社員のみ',
    notices: r.noticesEnabled ? '送る' : '送らない',
    adminAlerts: r.adminAlerts,
  };
}

/** Every directory room with its conversations of the last 30 days. */
export async function roomList(db: Db, sql: Sql, now: Date): Promise<Record<string, unknown>[]> {
  const [rooms, counts] = await Promise.all([
    db.room.findMany(),
    sql<{ platform: string; roomId: string; turns: number }>(
      `SELECT platform, "roomId", count(*)::int AS turns FROM turn_records
       WHERE "createdAt" >= $1::timestamptz AT TIME ZONE 'UTC' AND kind = 'user_request' GROUP BY 1, 2`,
      [new Date(now.getTime() - 30 * DAY).toISOString()],
    ),
  ]);
  const turns = new Map(counts.map((c) => [`${c.platform}:${c.roomId}`, c.turns]));
  const ja = new Intl.Collator('ja');
  return rooms
    .map((r) => ({
      id: r.externalId,
      name: r.name || null,
      ...roomFacts(r),
      turns30d: turns.get(`${r.platform}:${r.externalId}`) ?? 0,
    }))
    .sort((a, b) => ja.compare(a.service, b.service) || ja.compare(a.name ?? '', b.name ?? ''));
}

/** What a room's page adds: the directory's facts and who talked there. */
export async function roomProfile(db: Db, roomId: string): Promise<Record<string, unknown>> {
  const [room, speakers] = await Promise.all([
    db.room.findFirst({ where: { externalId: roomId } }),
    db.turnRecord.findMany({
      where: { roomId, memberId: { not: null } },
      distinct: ['memberId'],
      select: { memberId: true },
    }),
  ]);
  const members = await db.member.findMany({
    where: { id: { in: speakers.map((s) => s.memberId!) } },
    select: { id: true, name: true },
  });
  return {
    inDirectory: room !== null,
    ...(room ? roomFacts(room) : {}),
    members: members.sort((a, b) => a.name.localeCompare(b.name, 'ja')),
  };
}

/** A policy's machine rule as a sentence (「すべての操作で「給与」を含むものは禁止」), or what having none means. */
export function ruleInWords(rule: PolicyRule | null): string {
  if (!rule) return 'なし（AIへの指示として伝えるだけで、自動では止めません）';
  const tools = rule.tools.includes('*')
    ? 'すべての操作'
    : rule.tools.map((t) => TOOL_LABELS[t] ?? '（名前のない操作）').join('・');
  const words = rule.keywords?.length ? `で${rule.keywords.map((k) => `「${k}」`).join('')}を含むもの` : '';
  const action = rule.action === 'block' ? '禁止' : '実行前に確認';
  return `${tools}${words}は${action}${rule.shadow ? '（試験中: 記録するだけで止めません）' : ''}`;
}

/** Every policy, highest priority first. */
export async function policyList(db: Db): Promise<Record<string, unknown>[]> {
  const rows = await db.policy.findMany({ orderBy: [{ priority: 'desc' }, { title: 'asc' }] });
  return rows.map((p) => ({
    title: p.title,
    content: p.content,
    priority: p.priority,
    rule: ruleInWords(p.rule as PolicyRule | null),
  }));
}
