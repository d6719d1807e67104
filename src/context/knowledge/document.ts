import path from 'node:path';
import { parse as parseYaml } from 'yaml';

/**
 * One file read as a knowledge document: front matter (`---\nlevel: 3\ndepartment: 総務部\ntitle: …\n---`),
 * then the body. Pure: the importer gives the decoded text.
 */
export interface ParsedDocument {
  title: string;
  /** From front matter, or null for the configured default. */
  level: number | null;
  /** Department id or name as written (resolved against the directory by the importer). */
  department: string | null;
  body: string;
  markdown: boolean;
}

export type ParseResult = { ok: true; doc: ParsedDocument } | { ok: false; reason: string };

const FRONT_MATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

export function isMarkdown(file: string): boolean {
  return /\.(md|markdown)$/i.test(file);
}

export function parseDocument(file: string, text: string): ParseResult {
  const markdown = isMarkdown(file);
  let body = text.replace(/^\uFEFF/, '');
  let meta: Record<string, unknown> = {};
  const fm = FRONT_MATTER.exec(body);
  if (fm) {
    let parsed: unknown;
    try {
      parsed = parseYaml(fm[1]!);
    } catch {
      return { ok: false, reason: 'front matter is not valid YAML' };
    }
    if (parsed !== null && parsed !== undefined) {
      if (typeof parsed !== 'object' || Array.isArray(parsed)) {
        return { ok: false, reason: 'front matter must be key: value lines' };
      }
      meta = parsed as Record<string, unknown>;
    }
    body = body.slice(fm[0].length);
  }
  let level: number | null = null;
  if (meta.level !== undefined && meta.level !== null) {
    const n = typeof meta.level === 'string' ? Number(meta.level.trim()) : meta.level;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 6) {
      return { ok: false, reason: 'front matter level must be a whole number from 1 to 6' };
    }
    level = n;
  }
  let department: string | null = null;
  if (meta.department !== undefined && meta.department !== null) {
    if (typeof meta.department !== 'string' || !meta.department.trim()) {
      return { ok: false, reason: 'front matter department must be a department name or id' };
    }
    department = meta.department.trim();
  }
  if (meta.title !== undefined && meta.title !== null && typeof meta.title !== 'string') {
    return { ok: false, reason: 'front matter title must be text' };
  }
  const firstHeading = markdown ? /^#\s+(.+?)\s*#*\s*$/m.exec(body)?.[1] : undefined;
  const title = ((meta.title as string | undefined)?.trim() || firstHeading || path.parse(file).name).slice(0, 200);
  if (!body.trim()) return { ok: false, reason: 'empty document' };
  return { ok: true, doc: { title, level, department, body, markdown } };
}
