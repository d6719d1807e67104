import { loadDirectory } from '../authorization/directory';
import { DirectoryCache } from '../authorization/directory-cache';
import { loadOrgInfo, type OrgInfo } from '../context/context-builder';
import type { Db } from '../db/prisma';
import type { Sql } from '../db/sql';
import { hasKnowledgeDocuments } from '../knowledge/store';
import type { Logger } from '../observability/logger';
import { DirectoryChanges } from './directory-changes';
import { OrgCache } from './org-cache';

/** What is kept per organisation in one thread, and the listener that clears it. */
export interface OrgCaches {
  /** Departments and active members (the gate, the proposal loop, the handlers' person lookup). */
  directories: DirectoryCache;
  /** Whether the organisation has knowledge documents (a turn searches only then). */
  knowledgePresence: OrgCache<boolean>;
  /** The organisation (name, time zone, values) and its policies, as a turn's context shows them. */
  orgInfo: OrgCache<OrgInfo | null>;
  /** LISTENs for imports; started by {@link startOrgCaches}, stopped at shutdown. */
  changes: DirectoryChanges;
  /** Stops the caches' background refresh (at shutdown, with `changes`). */
  stopRefreshing: () => void;
}

/**
 * The per-organisation caches of one process, cleared when any instance or `npm run org:import` /
 * `knowledge:import` notifies a change; `onChange` clears the caller's own (the webhook's room lookup).
 */
export async function startOrgCaches(o: {
  db: Db;
  sql: Sql;
  databaseUrl: string;
  logger: Logger;
  onChange?: (orgId: string | null) => void;
}): Promise<OrgCaches> {
  const directories = new DirectoryCache((orgId) => loadDirectory(o.db, orgId));
  const knowledgePresence = new OrgCache((orgId) => hasKnowledgeDocuments(o.sql, orgId));
  const orgInfo = new OrgCache((orgId) => loadOrgInfo(o.db, orgId));
  const changes = new DirectoryChanges({
    connectionString: o.databaseUrl,
    logger: o.logger,
    onChange: (orgId) => {
      directories.invalidate(orgId);
      knowledgePresence.invalidate(orgId);
      orgInfo.invalidate(orgId);
      o.onChange?.(orgId);
    },
  });
  await changes.start();
  // Each is read again in the background before its bound for a missed notification, not by a waiting message.
  const stops = [directories, knowledgePresence, orgInfo].map((c) => c.startRefreshing());
  return { directories, knowledgePresence, orgInfo, changes, stopRefreshing: () => stops.forEach((stop) => stop()) };
}
