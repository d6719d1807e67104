import { loadDirectory } from '../authorization/directory';
import { DirectoryCache } from '../authorization/directory-cache';
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
  /** LISTENs for imports; started by {@link startOrgCaches}, stopped at shutdown. */
  changes: DirectoryChanges;
}

/**
 * The per-organisation caches of one thread (the main thread and each worker thread have their own), cleared
 * when any instance or `npm run org:import` / `knowledge:import` notifies a change; `onChange` clears the
 * caller's own (the webhook's room lookup).
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
  const changes = new DirectoryChanges({
    connectionString: o.databaseUrl,
    logger: o.logger,
    onChange: (orgId) => {
      directories.invalidate(orgId);
      knowledgePresence.invalidate(orgId);
      o.onChange?.(orgId);
    },
  });
  await changes.start();
  return { directories, knowledgePresence, changes };
}
