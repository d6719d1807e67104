import type { ClosingDay } from '../core/business-calendar';
import type { Directory, PolicyRule } from './directory.schema';
import { consoleAccountId } from './platform-accounts';

/** Time zone used when neither the organisation nor a schedule names one (the database default). */
export const DEFAULT_TIMEZONE = 'Asia/Tokyo';

/** The rows a directory should leave in the database, in the column shapes of the Prisma models. */
export interface DirectoryRows {
  org: {
    id: string;
    name: string;
    timezone: string;
    values: string;
    discordGuildIds: string[];
    quietHours: string | null;
    closingDays: ClosingDay[];
  };
  departments: Array<{
    orgId: string;
    id: string;
    name: string;
    parentId: string | null;
    topSecret: boolean;
    aliases: string[];
    handles: string[];
  }>;
  members: Array<{
    orgId: string;
    id: string;
    name: string;
    aliases: string[];
    reading: string | null;
    romaji: string | null;
    /** Filled at import from the dictionary (org/name-readings.ts) when the directory gives no reading. */
    dictionaryReading: string | null;
    level: number;
    departmentId: string | null;
    title: string | null;
    noticesOptOut: boolean;
    quietHours: string | null;
    active: boolean;
  }>;
  accounts: Array<{ platform: string; accountId: string; orgId: string; memberId: string }>;
  rooms: Array<{
    platform: string;
    externalId: string;
    orgId: string;
    name: string;
    authority: string;
    noticesEnabled: boolean;
    adminAlerts: boolean;
  }>;
  policies: Array<{
    orgId: string;
    id: string;
    title: string;
    content: string;
    rule: PolicyRule | null;
    priority: number;
  }>;
  schedules: Array<{
    id: string;
    orgId: string;
    kind: string;
    cron: string;
    timezone: string;
    platform: string | null;
    roomId: string | null;
    enabled: boolean;
  }>;
}

/** The database id of a directory schedule: schedule ids are global, so they carry the org id. */
export function scheduleRowId(orgId: string, scheduleId: string): string {
  return `${orgId}:${scheduleId}`;
}

/** Maps a validated directory to the rows it describes (pure; absent optional values become defaults). */
export function directoryRows(dir: Directory): DirectoryRows {
  const orgId = dir.organization.id;
  const timezone = dir.organization.timezone ?? DEFAULT_TIMEZONE;
  return {
    org: {
      id: orgId,
      name: dir.organization.name,
      timezone,
      values: dir.organization.values ?? '',
      discordGuildIds: [...new Set(dir.organization.discord_guilds ?? [])].sort(),
      quietHours: dir.organization.quiet_hours ?? null,
      closingDays: (dir.organization.closing_days ?? []).map((c) => ({
        name: c.name,
        from: c.from,
        to: c.to ?? c.from,
      })),
    },
    departments: dir.departments.map((d) => ({
      orgId,
      id: d.id,
      name: d.name,
      parentId: d.parent ?? null,
      topSecret: d.top_secret ?? false,
      aliases: d.aliases ?? [],
      handles: d.handles ?? [],
    })),
    members: dir.members.map((m) => ({
      orgId,
      id: m.id,
      name: m.name,
      aliases: m.aliases ?? [],
      reading: m.reading ?? null,
      romaji: m.romaji ?? null,
      dictionaryReading: null,
      level: m.level,
      departmentId: m.department ?? null,
      title: m.title ?? null,
      noticesOptOut: m.notices_opt_out ?? false,
      quietHours: m.quiet_hours ?? null,
      active: true,
    })),
    accounts: withConsoleAccounts(orgId, dir.members),
    rooms: dir.rooms.map((r) => ({
      platform: r.platform,
      externalId: r.id,
      orgId,
      name: r.name ?? '',
      authority: r.authority,
      noticesEnabled: r.notices ?? true,
      adminAlerts: r.admin ?? false,
    })),
    policies: dir.policies.map((p) => ({
      orgId,
      id: p.id,
      title: p.title,
      content: p.content,
      rule: p.rule ? compactRule(p.rule) : null,
      priority: p.priority ?? 0,
    })),
    schedules: dir.schedules.map((s) => ({
      id: scheduleRowId(orgId, s.id),
      orgId,
      kind: s.kind,
      cron: s.cron,
      timezone: s.timezone ?? timezone,
      platform: s.room?.platform ?? null,
      roomId: s.room?.id ?? null,
      enabled: s.enabled ?? true,
    })),
  };
}

/**
 * Every member's listed platform accounts, plus a console account `<org>:<member>` for members without
 * one, so the console speaks as any member picked there (account ids are global across organisations;
 * organisation ids contain no ":").
 */
function withConsoleAccounts(orgId: string, members: Directory['members']): DirectoryRows['accounts'] {
  const listed = members.flatMap((m) =>
    Object.entries(m.accounts ?? {})
      .filter((e): e is [string, string] => e[1] !== undefined)
      .map(([platform, accountId]) => ({ platform, accountId, orgId, memberId: m.id })),
  );
  const taken = new Set(listed.filter((a) => a.platform === 'console').map((a) => a.accountId));
  const implicit = members
    .filter((m) => m.accounts?.console === undefined && !taken.has(consoleAccountId(orgId, m.id)))
    .map((m) => ({ platform: 'console', accountId: consoleAccountId(orgId, m.id), orgId, memberId: m.id }));
  return [...listed, ...implicit];
}

/** The rule without absent optional keys, so the stored JSON is the same on every import. */
function compactRule(rule: PolicyRule): PolicyRule {
  const out: PolicyRule = { tools: rule.tools, action: rule.action };
  if (rule.shadow !== undefined) out.shadow = rule.shadow;
  if (rule.keywords !== undefined) out.keywords = rule.keywords;
  return out;
}
