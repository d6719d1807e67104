/** What to do to turn the existing rows into the desired ones. */
export interface RowDiff<T> {
  create: T[];
  /** Desired rows whose row exists with different values. */
  update: T[];
  /** Existing rows (as loaded) that the desired set does not contain. */
  remove: Array<Record<string, unknown>>;
}

/**
 * Compares existing rows with desired rows by key. Only the desired rows' fields are compared, so
 * columns the directory does not own (timestamps, preferences, last fired time) never cause writes;
 * an unchanged directory therefore produces no writes at all.
 */
export function diffRows<T extends object>(
  existing: ReadonlyArray<Record<string, unknown>>,
  desired: readonly T[],
  key: (row: Record<string, unknown>) => string,
): RowDiff<T> {
  const byKey = new Map(existing.map((row) => [key(row), row]));
  const desiredKeys = new Set<string>();
  const out: RowDiff<T> = { create: [], update: [], remove: [] };
  for (const row of desired) {
    const k = key(row as Record<string, unknown>);
    desiredKeys.add(k);
    const old = byKey.get(k);
    if (!old) out.create.push(row);
    else if (!sameValues(old, row)) out.update.push(row);
  }
  out.remove = existing.filter((row) => !desiredKeys.has(key(row)));
  return out;
}

function sameValues(old: Record<string, unknown>, row: object): boolean {
  return Object.entries(row).every(([field, value]) => stableJson(old[field] ?? null) === stableJson(value ?? null));
}

/** JSON with object keys sorted (jsonb does not keep key order). */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}
