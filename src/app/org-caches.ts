import { loadDirectory } from '../authorization/directory';
import { DirectoryCache } from '../authorization/directory-cache';
import { loadOrgInfo, type OrgInfo } from '../context/context-builder';
import type { Db } from '../db/prisma';
import type { Sql } from '../db/sql';
import { hasKnowledgeDocuments } from '../context/knowledge/store';
import type { Logger } from '../observability/logger';
import { DirectoryChanges } from '../org/directory-changes';
import { OrgCache } from '../org/org-cache';
import { loadAllRooms, RoomIndex } from '../org/room-index';

/** What is kept per organisation in one process, and the listener that clears it. */
export interface OrgCaches {
  /** Departments and active members (the gate, the proposal loop, the handlers' person lookup). */
  directories: DirectoryCache;
  /** Whether the organisation has knowledge documents (a turn searches only then). */
  knowledgePresence: OrgCache<boolean>;
  /** The organisation (name, time zone, values) and its policies, as a turn's context shows them. */
  orgInfo: OrgCache<OrgInfo | null>;
  /** Every directory room, for the intake's room lookup (ChatWork webhooks, Discord channels). */
  rooms: RoomIndex;
  /** Discord guild → organisation (the directory's `organization.discord_guilds` allow-list), null when none. */
  guildOrgs: OrgCache<string | null>;
  /** Every allow-listed Discord guild of every organisation (where the commands are registered). */
  allowListedGuilds: () => Promise<string[]>;
  /** LISTENs for imports; started by {@link startOrgCaches}, stopped at shutdown. */
  changes: DirectoryChanges;
  /** Stops the caches' background refresh and the listener (at shutdown). */
  stop: () => Promise<void>;
}

/** How long a guild's organisation is kept without an import notification (a missed one is bounded by it). */
const GUILD_ORG_MAX_AGE_MS = 30_000;

/** The organisation of a Discord guild: the one whose directory lists it, or null. */
async function loadGuildOrg(db: Db, guildId: string): Promise<string | null> {
  const org = await db.organization.findFirst({ where: { discordGuildIds: { has: guildId } }, select: { id: true } });
  return org?.id ?? null;
}

/**
 * The per-organisation caches of one process, cleared when any instance or `npm run org:import` /
 * `knowledge:import` notifies a change. The room index is read at start (the first webhook does not wait for it).
 */
export async function startOrgCaches(o: { db: Db; sql: Sql; databaseUrl: string; logger: Logger }): Promise<OrgCaches> {
  const directories = new DirectoryCache((orgId) => loadDirectory(o.db, orgId));
  const knowledgePresence = new OrgCache((orgId) => hasKnowledgeDocuments(o.sql, orgId));
  const orgInfo = new OrgCache((orgId) => loadOrgInfo(o.db, orgId));
  const rooms = new RoomIndex(() => loadAllRooms(o.sql));
  const guildOrgs = new OrgCache((guildId) => loadGuildOrg(o.db, guildId), GUILD_ORG_MAX_AGE_MS);
  await rooms.warm();
  const changes = new DirectoryChanges({
    connectionString: o.databaseUrl,
    logger: o.logger,
    onChange: (orgId) => {
      directories.invalidate(orgId);
      knowledgePresence.invalidate(orgId);
      orgInfo.invalidate(orgId);
      // Rooms and guilds are looked up across organisations: any import clears them all.
      rooms.invalidate();
      guildOrgs.invalidate(null);
    },
  });
  await changes.start();
  // Each is read again in the background before its bound for a missed notification, not by a waiting message.
  const stops = [directories, knowledgePresence, orgInfo, rooms].map((c) => c.startRefreshing());
  const stop = async () => {
    stops.forEach((s) => s());
    await changes.stop();
  };
  const allowListedGuilds = async () => {
    const orgs = await o.db.organization.findMany({ select: { discordGuildIds: true } });
    return [...new Set(orgs.flatMap((x) => x.discordGuildIds))].sort();
  };
  return { directories, knowledgePresence, orgInfo, rooms, guildOrgs, allowListedGuilds, changes, stop };
}
