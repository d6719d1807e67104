import type { Db } from '../../db/prisma';
import { pgText, type Sql } from '../../db/sql';
import type { Passage } from './passages';
import { passageTokens } from './tokens';

/**
 * The one writer of `knowledge_documents` and `knowledge_passages` (R-X4). A document and its passages are
 * replaced together in one transaction, so a search never sees half a document.
 */

export interface StoredDocument {
  id: string;
  sourcePath: string;
  contentHash: string;
}

export interface DocumentToStore {
  orgId: string;
  sourcePath: string;
  contentHash: string;
  title: string;
  content: string;
  level: number;
  departmentId: string | null;
  passages: Passage[];
}

/** The organisation's imported documents (key, hash) whose source path is `root` or under it. */
export async function storedDocuments(
  db: Db,
  orgId: string,
  root: string,
  isFolder: boolean,
): Promise<StoredDocument[]> {
  return db.knowledgeDocument.findMany({
    where: { orgId, sourcePath: isFolder ? { startsWith: root.endsWith('/') ? root : `${root}/` } : root },
    select: { id: true, sourcePath: true, contentHash: true },
  });
}

/** Adds or replaces one document (by organisation and source path) with its passages. */
export async function saveDocument(db: Db, doc: DocumentToStore): Promise<void> {
  const data = {
    title: pgText(doc.title),
    content: pgText(doc.content),
    contentHash: doc.contentHash,
    level: doc.level,
    departmentId: doc.departmentId,
  };
  await db.$transaction(async (tx) => {
    const row = await tx.knowledgeDocument.upsert({
      where: { orgId_sourcePath: { orgId: doc.orgId, sourcePath: doc.sourcePath } },
      create: { orgId: doc.orgId, sourcePath: doc.sourcePath, ...data },
      update: data,
      select: { id: true },
    });
    await tx.knowledgePassage.deleteMany({ where: { documentId: row.id } });
    await tx.knowledgePassage.createMany({
      data: doc.passages.map((p, ordinal) => ({
        documentId: row.id,
        ordinal,
        heading: p.heading === null ? null : pgText(p.heading),
        text: pgText(p.text),
        tokens: passageTokens(`${doc.title}\n${p.heading ?? ''}\n${p.text}`),
      })),
    });
  });
}

/** Removes documents (their passages go with them). */
export async function removeDocuments(db: Db, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  return (await db.knowledgeDocument.deleteMany({ where: { id: { in: ids } } })).count;
}

/** Whether an organisation has any knowledge document (a turn searches only then). */
export async function hasKnowledgeDocuments(sql: Sql, orgId: string): Promise<boolean> {
  const rows = await sql<{ any: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM knowledge_documents WHERE "orgId" = $1) AS any`,
    [orgId],
  );
  return rows[0]?.any === true;
}

/**
 * After an import that changed something: moves the GIN index's pending entries into the index (until then every
 * search scans the pending list) and refreshes the planner's statistics, so searches use the token index at once.
 */
export async function refreshSearchIndex(db: Db): Promise<void> {
  await db.$queryRawUnsafe(`SELECT gin_clean_pending_list('knowledge_passages_tokens_idx'::regclass)`);
  await db.$executeRawUnsafe('ANALYZE knowledge_documents, knowledge_passages');
}
