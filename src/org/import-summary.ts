import type { McpServerSection } from './directory.schema';

/** The kinds of rows a directory import maintains. */
export type DirectoryEntity = 'departments' | 'members' | 'platformAccounts' | 'rooms' | 'policies' | 'schedules';

/** Counts for one kind of row: how many the file defines, and what this run changed. */
export interface EntityCounts {
  /** Rows described by the file (members: active members). */
  total: number;
  created: number;
  updated: number;
  /** Rows deleted (members: marked inactive). */
  removed: number;
}

/** The result of an import. Importing the same file again gives the same totals and no changes. */
export interface ImportSummary {
  orgId: string;
  /** `created` / `updated` / `unchanged` for the organisation row itself. */
  organization: 'created' | 'updated' | 'unchanged';
  counts: Record<DirectoryEntity, EntityCounts>;
  /** Members of this org now inactive (no longer in the file). */
  inactiveMembers: number;
  /** False when the run wrote nothing. */
  changed: boolean;
  /** Readings of kanji-only names from the dictionary (org/name-readings.ts); absent when none was needed. */
  readings?: { read: number; analysed: number; failed?: string };
  /** The file's MCP server sections (issue 42; not stored as rows: the service connects to them at start). */
  mcpServers?: McpServerSection[];
}

/** A short human-readable summary (one line per kind of row), for the CLI and start-up logs. */
export function formatImportSummary(s: ImportSummary): string {
  const lines = [`Organisation "${s.orgId}": ${s.organization}${s.changed ? '' : ' (no changes)'}`];
  for (const [entity, c] of Object.entries(s.counts)) {
    const removed = entity === 'members' ? 'deactivated' : 'removed';
    const changes = `created ${c.created}, updated ${c.updated}, ${removed} ${c.removed}`;
    lines.push(`  ${entity.padEnd(17)} ${String(c.total).padStart(4)}  (${changes})`);
  }
  if (s.inactiveMembers > 0) lines.push(`  inactive members  ${String(s.inactiveMembers).padStart(4)}`);
  const r = s.readings;
  if (r && r.read + r.analysed > 0) {
    lines.push(
      `  readings          ${String(r.read).padStart(4)}  (from the dictionary; ${r.analysed} names read now)`,
    );
  }
  if (r?.failed) lines.push(`  readings: the dictionary could not be used (${r.failed}); kanji names match as written`);
  return lines.join('\n');
}
