import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '../../db/prisma';
import { DIRECTORY_CHANNEL } from '../../org/directory-changes';
import type { KnowledgeConfig } from './config';
import { parseDocument } from './document';
import { splitPassages } from './passages';
import { refreshSearchIndex, removeDocuments, saveDocument, storedDocuments } from './store';

/**
 * `npm run knowledge:import -- PATH` (R-X4): imports Markdown and text files — a folder (recursively) or
 * one file — into the organisation's knowledge. A changed file (content hash, or its level, department or
 * title) is replaced; documents of files deleted from an imported folder are removed; a file that is not
 * UTF-8 text, is binary, is larger than the configured size or has bad front matter is skipped with its path
 * and reason (its previous version, if any, stays) and the rest is imported.
 */

export interface ImportSummary {
  added: string[];
  updated: string[];
  unchanged: string[];
  removed: string[];
  skipped: { path: string; reason: string }[];
}

const TEXT_FILE = /\.(md|markdown|txt)$/i;

export class KnowledgeImportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KnowledgeImportError';
  }
}

export async function importKnowledge(
  db: Db,
  input: { orgId: string; path: string; config: KnowledgeConfig },
): Promise<ImportSummary> {
  const root = path.resolve(input.path);
  const stat = await fs.stat(root).catch(() => null);
  if (!stat || (!stat.isDirectory() && !stat.isFile())) {
    throw new KnowledgeImportError(`${input.path}: no such file or folder`);
  }
  const isFolder = stat.isDirectory();
  const summary: ImportSummary = { added: [], updated: [], unchanged: [], removed: [], skipped: [] };
  const skip = (file: string, reason: string) => summary.skipped.push({ path: file, reason });

  const departments = await db.department.findMany({ where: { orgId: input.orgId }, select: { id: true, name: true } });
  const stored = new Map((await storedDocuments(db, input.orgId, root, isFolder)).map((d) => [d.sourcePath, d]));
  const seen = new Set<string>();

  const files = isFolder ? await walk(root, skip) : [root];
  for (const file of files) {
    seen.add(file);
    if (!TEXT_FILE.test(file)) {
      skip(file, 'not a Markdown or text file (.md, .markdown, .txt)');
      continue;
    }
    const size = (await fs.stat(file)).size;
    if (size > input.config.maxBytes) {
      skip(file, `larger than ${input.config.maxBytes} bytes (${size} bytes; KNOWLEDGE_MAX_BYTES)`);
      continue;
    }
    const bytes = await fs.readFile(file);
    if (bytes.includes(0)) {
      skip(file, 'binary file (contains NUL bytes)');
      continue;
    }
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      skip(file, 'not UTF-8 text');
      continue;
    }
    const parsed = parseDocument(file, text);
    if (!parsed.ok) {
      skip(file, parsed.reason);
      continue;
    }
    const doc = parsed.doc;
    let departmentId: string | null = null;
    if (doc.department !== null) {
      const dep =
        departments.find((d) => d.id === doc.department) ?? departments.find((d) => d.name === doc.department);
      if (!dep) {
        skip(file, `unknown department "${doc.department}" (not in the organisation directory)`);
        continue;
      }
      departmentId = dep.id;
    }
    const level = doc.level ?? input.config.defaultLevel;
    const passages = splitPassages(doc.body, doc.markdown);
    if (passages.length === 0) {
      skip(file, 'no text to import');
      continue;
    }
    const contentHash = createHash('sha256')
      .update(bytes)
      .update(JSON.stringify([level, departmentId, doc.title]))
      .digest('hex');
    const before = stored.get(file);
    if (before?.contentHash === contentHash) {
      summary.unchanged.push(file);
      continue;
    }
    await saveDocument(db, {
      orgId: input.orgId,
      sourcePath: file,
      contentHash,
      title: doc.title,
      content: doc.body,
      level,
      departmentId,
      passages,
    });
    (before ? summary.updated : summary.added).push(file);
  }
  const gone = [...stored.values()].filter((d) => !seen.has(d.sourcePath));
  await removeDocuments(
    db,
    gone.map((d) => d.id),
  );
  summary.removed.push(...gone.map((d) => d.sourcePath));
  if (summary.added.length + summary.updated.length + summary.removed.length > 0) {
    await refreshSearchIndex(db);
    // Every instance's turns search an organisation's documents only when it has some (cached per organisation).
    await db.$executeRaw`SELECT pg_notify(${DIRECTORY_CHANNEL}, ${input.orgId})`;
  }
  return summary;
}

/** Files under `dir`, sorted; hidden entries are ignored, symbolic links and other non-files skipped. */
async function walk(dir: string, skip: (file: string, reason: string) => void): Promise<string[]> {
  const out: string[] = [];
  const entries = (await fs.readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const e of entries) {
    if (e.name.startsWith('.')) continue;
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(full, skip)));
    else if (e.isFile()) out.push(full);
    else skip(full, e.isSymbolicLink() ? 'symbolic link (not followed)' : 'not a regular file');
  }
  return out;
}

/** The summary as the command prints it: counts, then one line per file with what happened. */
export function formatKnowledgeSummary(s: ImportSummary, cwd = process.cwd()): string {
  const rel = (p: string) => {
    const r = path.relative(cwd, p);
    return r && !r.startsWith('..') ? r : p;
  };
  const lines = [
    `added ${s.added.length}, updated ${s.updated.length}, unchanged ${s.unchanged.length}, ` +
      `removed ${s.removed.length}, skipped ${s.skipped.length}`,
    ...s.added.map((p) => `  added      ${rel(p)}`),
    ...s.updated.map((p) => `  updated    ${rel(p)}`),
    ...s.unchanged.map((p) => `  unchanged  ${rel(p)}`),
    ...s.removed.map((p) => `  removed    ${rel(p)}`),
    ...s.skipped.map((x) => `  skipped    ${rel(x.path)}: ${x.reason}`),
  ];
  return lines.join('\n');
}
