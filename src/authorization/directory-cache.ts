import type { Directory } from './directory';

/**
 * The organisation directory (departments, active members) kept per organisation, so a turn does not
 * read it again. It changes only on a directory import: the importer sends a NOTIFY that every instance
 * hears ({@link import('../org/directory-changes').DirectoryChanges}) and calls {@link invalidate}. A failed
 * load is not kept (the next turn tries again, and the caller fails closed meanwhile); `maxAgeMs` bounds how
 * long an entry lives if a notification was ever missed.
 */
export class DirectoryCache {
  private readonly entries = new Map<string, { at: number; directory: Promise<Directory> }>();

  constructor(
    private readonly load: (orgId: string) => Promise<Directory>,
    private readonly maxAgeMs = 5 * 60_000,
    private readonly clock: () => number = Date.now,
  ) {}

  get(orgId: string): Promise<Directory> {
    const hit = this.entries.get(orgId);
    if (hit && this.clock() - hit.at < this.maxAgeMs) return hit.directory;
    const entry = { at: this.clock(), directory: this.load(orgId) };
    this.entries.set(orgId, entry);
    entry.directory.catch(() => {
      if (this.entries.get(orgId) === entry) this.entries.delete(orgId);
    });
    return entry.directory;
  }

  /** Forgets one organisation's directory, or every one (`null`: a notification may have been missed). */
  invalidate(orgId: string | null): void {
    if (orgId === null) this.entries.clear();
    else this.entries.delete(orgId);
  }
}
