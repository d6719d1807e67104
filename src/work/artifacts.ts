import type { Db } from '../db/prisma';
import { pgText } from '../db/sql';

/** Media types an artifact may have (drafts and summaries as text or Markdown, extracted data as JSON). */
export const ARTIFACT_MEDIA_TYPES = ['text/plain', 'text/markdown', 'application/json'] as const;
export type ArtifactMediaType = (typeof ARTIFACT_MEDIA_TYPES)[number];

/** Longest body an artifact may hold (characters). */
export const ARTIFACT_BODY_MAX = 20_000;

/** A body at most this long is shown in the completion report itself; longer ones get a link. */
export const ARTIFACT_INLINE_MAX = 400;

export interface NewArtifact {
  orgId: string;
  ownerMemberId: string | null;
  backgroundWorkId: string | null;
  title: string;
  mediaType: ArtifactMediaType;
  body: string;
  metadata?: Record<string, unknown>;
  /** The save call's origin key: the same key returns the artifact written first. */
  idempotencyKey: string | null;
}

export interface ArtifactView {
  id: string;
  title: string;
  mediaType: string;
  body: string;
  ownerMemberId: string | null;
  backgroundWorkId: string | null;
  metadata: unknown;
  createdAt: Date;
}

const VIEW = {
  id: true,
  title: true,
  mediaType: true,
  body: true,
  ownerMemberId: true,
  backgroundWorkId: true,
  metadata: true,
  createdAt: true,
} as const;

/**
 * The one writer of `artifacts` (R-W2): drafts, summaries and extracted data made by background work,
 * referenced by id. A repeated save (a step run again after a crash) returns the first artifact.
 */
export async function writeArtifact(db: Db, a: NewArtifact): Promise<{ artifact: ArtifactView; created: boolean }> {
  if (a.idempotencyKey) {
    const earlier = await db.artifact.findUnique({ where: { idempotencyKey: a.idempotencyKey }, select: VIEW });
    if (earlier) return { artifact: earlier, created: false };
  }
  const data = {
    orgId: a.orgId,
    ownerMemberId: a.ownerMemberId,
    backgroundWorkId: a.backgroundWorkId,
    title: pgText(a.title),
    mediaType: a.mediaType,
    body: pgText(a.body),
    metadata: (a.metadata ?? {}) as object,
    idempotencyKey: a.idempotencyKey,
  };
  try {
    return { artifact: await db.artifact.create({ data, select: VIEW }), created: true };
  } catch (err) {
    // Two attempts at once: the other one's row wins.
    if ((err as { code?: string }).code === 'P2002' && a.idempotencyKey) {
      const row = await db.artifact.findUnique({ where: { idempotencyKey: a.idempotencyKey }, select: VIEW });
      if (row) return { artifact: row, created: false };
    }
    throw err;
  }
}

/** One artifact of an organisation (null when there is none with that id there). */
export async function readArtifact(db: Db, orgId: string | null, id: string): Promise<ArtifactView | null> {
  const row = await db.artifact.findFirst({ where: { id, ...(orgId ? { orgId } : {}) }, select: VIEW });
  return row;
}

/** The artifacts a background work made, oldest first. */
export async function artifactsOfWork(db: Db, workId: string): Promise<ArtifactView[]> {
  return db.artifact.findMany({ where: { backgroundWorkId: workId }, orderBy: { createdAt: 'asc' }, select: VIEW });
}
