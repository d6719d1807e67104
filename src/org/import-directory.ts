import fs from 'node:fs/promises';
import type { Db } from '../db/prisma';
import { DIRECTORY_CHANNEL } from './directory-changes';
import { checkDirectory } from './directory-checks';
import { directoryRows, type DirectoryRows } from './directory-rows';
import type { Directory } from './directory.schema';
import type { ImportSummary } from './import-summary';
import { withDictionaryReadings } from './name-readings';
import { parseDirectory } from './parse-directory';
import { syncDirectory, type Tx } from './sync-directory';
import { formatPath } from './yaml-locate';
import type { YamlSlip } from './yaml-slips';

export { formatImportSummary, type DirectoryEntity, type EntityCounts, type ImportSummary } from './import-summary';

/** A directory that cannot be imported: every problem, and the file when known. */
export class DirectoryImportError extends Error {
  constructor(
    readonly errors: string[],
    readonly fileName?: string,
    /** The typing slip behind a YAML syntax error, when one explains it (said in the operator's language). */
    readonly slip?: YamlSlip,
  ) {
    const what = fileName ? `Invalid organisation directory file ${fileName}` : 'Invalid organisation directory';
    super(`${what}:\n${errors.map((e) => `  - ${e}`).join('\n')}`);
    this.name = 'DirectoryImportError';
  }
}

/** Advisory lock serialising directory imports (several instances may start together). */
const IMPORT_LOCK = 72707370;

/**
 * Stores a validated directory for its organisation in ONE transaction (all-or-nothing, R-F3):
 * upserts the organisation, departments, members with their platform accounts, rooms, policies and
 * schedules (schedule ids are `${orgId}:${id}`). Entries of that organisation missing from the file are
 * deleted; members are marked inactive instead and lose their platform accounts. Only rows that differ
 * are written, so re-importing the same directory changes nothing.
 *
 * @throws DirectoryImportError when the directory is inconsistent or a room / platform account already
 *   belongs to another organisation (nothing is written).
 */
export async function importDirectory(db: Db, directory: Directory): Promise<ImportSummary> {
  const problems = checkDirectory(directory);
  if (problems.length > 0) throw new DirectoryImportError(problems.map((p) => `${formatPath(p.path)}: ${p.message}`));
  // Readings of kanji-only names are read before the transaction (the dictionary takes seconds to load).
  const { rows, outcome } = await withDictionaryReadings(db, directoryRows(directory));
  const summary = await db.$transaction(
    async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${IMPORT_LOCK})`;
      await assertNotOwnedElsewhere(tx, rows);
      const summary = await syncDirectory(tx, rows);
      // Every instance's directory caches hear this when the transaction commits (never on a rollback).
      await tx.$executeRaw`SELECT pg_notify(${DIRECTORY_CHANNEL}, ${rows.org.id})`;
      return summary;
    },
    { maxWait: 10_000, timeout: 60_000 },
  );
  return outcome.read + outcome.analysed > 0 || outcome.failed ? { ...summary, readings: outcome } : summary;
}

/**
 * Reads, validates and imports a directory file (YAML or JSON).
 * @throws DirectoryImportError naming the file and listing every problem (with lines) when it is invalid.
 */
export async function importDirectoryFile(
  db: Db,
  path: string,
  env?: Readonly<Record<string, string | undefined>>,
): Promise<ImportSummary> {
  let text: string;
  try {
    text = await fs.readFile(path, 'utf8');
  } catch (err) {
    throw new DirectoryImportError([`cannot read the file: ${(err as Error).message}`], path);
  }
  const parsed = parseDirectory(text, path, env);
  if (!parsed.ok) throw new DirectoryImportError(parsed.errors, path, parsed.slip);
  try {
    const summary = await importDirectory(db, parsed.directory);
    return parsed.directory.mcp_servers.length > 0 ? { ...summary, mcpServers: parsed.directory.mcp_servers } : summary;
  } catch (err) {
    if (err instanceof DirectoryImportError) throw new DirectoryImportError(err.errors, path);
    throw err;
  }
}

/** Rooms and platform accounts have global keys: refuse to take one over from another organisation. */
async function assertNotOwnedElsewhere(tx: Tx, rows: DirectoryRows): Promise<void> {
  const orgId = rows.org.id;
  const errors: string[] = [];
  // Queries of an interactive transaction share one connection: run them one after another.
  const rooms = await tx.room.findMany({
    where: { orgId: { not: orgId }, externalId: { in: rows.rooms.map((r) => r.externalId) } },
  });
  const accounts = await tx.platformAccount.findMany({
    where: { orgId: { not: orgId }, accountId: { in: rows.accounts.map((a) => a.accountId) } },
  });
  rows.rooms.forEach((r, i) => {
    const other = rooms.find((o) => o.platform === r.platform && o.externalId === r.externalId);
    if (other)
      errors.push(`rooms[${i}]: ${r.platform} room "${r.externalId}" already belongs to organisation "${other.orgId}"`);
  });
  for (const a of rows.accounts) {
    const other = accounts.find((o) => o.platform === a.platform && o.accountId === a.accountId);
    const account = `${a.platform} account "${a.accountId}"`;
    if (other) errors.push(`member "${a.memberId}": ${account} already belongs to organisation "${other.orgId}"`);
  }
  if (errors.length > 0) throw new DirectoryImportError(errors);
}
