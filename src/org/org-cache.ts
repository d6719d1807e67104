/**
 * A value kept per organisation (its directory, whether it has knowledge documents …), so a turn does not read
 * it again. Such values change only on an import: the importer sends a NOTIFY that every instance hears
 * ({@link import('./directory-changes').DirectoryChanges}) and calls {@link invalidate}. A failed load is not
 * kept (the next turn tries again, and the caller fails closed meanwhile); `maxAgeMs` bounds how long an entry
 * lives if a notification was ever missed.
 */
export class OrgCache<T> {
  private readonly entries = new Map<string, { at: number; value: Promise<T> }>();

  constructor(
    private readonly load: (orgId: string) => Promise<T>,
    private readonly maxAgeMs = 5 * 60_000,
    private readonly clock: () => number = Date.now,
  ) {}

  get(orgId: string): Promise<T> {
    const hit = this.entries.get(orgId);
    if (hit && this.clock() - hit.at < this.maxAgeMs) return hit.value;
    const entry = { at: this.clock(), value: this.load(orgId) };
    this.entries.set(orgId, entry);
    entry.value.catch(() => {
      if (this.entries.get(orgId) === entry) this.entries.delete(orgId);
    });
    return entry.value;
  }

  /** Forgets one organisation's value, or every one (`null`: a notification may have been missed). */
  invalidate(orgId: string | null): void {
    if (orgId === null) this.entries.clear();
    else this.entries.delete(orgId);
  }
}
