/**
 * A value kept per organisation (its directory, whether it has knowledge documents …), so a turn does not read
 * it again. Such values change only on an import: the importer sends a NOTIFY that every instance hears
 * ({@link import('./directory-changes').DirectoryChanges}) and calls {@link invalidate}. A failed load is not
 * kept (the next turn tries again, and the caller fails closed meanwhile); `maxAgeMs` bounds how long an entry
 * lives if a notification was ever missed. {@link refresh} (on a timer, {@link startRefreshing}) reads the kept
 * values again before that bound, in the background, so that no message waits for the bound's reload (a quiet
 * organisation's next message otherwise read its whole directory on its way to the model).
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

  /**
   * Reads again every kept value older than half of `maxAgeMs`, and keeps the new one unless the entry was
   * invalidated meanwhile (an import's value must not be overwritten by one read before it). A value whose read
   * fails is dropped: the next `get` reads it, and its caller fails closed if that fails too.
   */
  async refresh(): Promise<void> {
    const now = this.clock();
    await Promise.all(
      [...this.entries].map(async ([orgId, entry]) => {
        if (now - entry.at < this.maxAgeMs / 2) return;
        const at = this.clock();
        try {
          const value = await this.load(orgId);
          if (this.entries.get(orgId) === entry) this.entries.set(orgId, { at, value: Promise.resolve(value) });
        } catch {
          if (this.entries.get(orgId) === entry) this.entries.delete(orgId);
        }
      }),
    );
  }

  /** Calls {@link refresh} every quarter of `maxAgeMs` (a timer that keeps no process alive); returns its stop. */
  startRefreshing(): () => void {
    return refreshEvery(() => this.refresh(), this.maxAgeMs / 4);
  }

  /** Forgets one organisation's value, or every one (`null`: a notification may have been missed). */
  invalidate(orgId: string | null): void {
    if (orgId === null) this.entries.clear();
    else this.entries.delete(orgId);
  }
}

/** Runs `refresh` every `ms` on an unref'd timer, one run at a time; returns the function that stops it. */
export function refreshEvery(refresh: () => Promise<void>, ms: number): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    refresh()
      .catch(() => undefined)
      .finally(() => (running = false));
  }, ms);
  timer.unref();
  return () => clearInterval(timer);
}
