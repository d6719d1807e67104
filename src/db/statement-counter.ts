import { Client } from 'pg';

/**
 * Counts SQL statements sent through the `pg` driver (the raw pool and Prisma's adapter both end in
 * `Client.prototype.query`). Off unless installed: the service installs it when HISHO_COUNT_SQL=1, tests call
 * `installStatementCounter()` directly. Each statement is recorded by its shape (first keyword and table), never
 * with its parameters.
 */
export interface StatementCounter {
  /** Statements since install or the last `reset()`. */
  readonly total: number;
  /** Statements by shape, e.g. `UPDATE work_items` or `SELECT rooms`. */
  byShape(): Record<string, number>;
  reset(): void;
}

const counts = new Map<string, number>();
let total = 0;
let installed: StatementCounter | null = null;

/** `UPDATE work_items`, `INSERT outbound_messages`, `WITH …`, `BEGIN`: the statement's kind and first table. */
export function statementShape(text: string): string {
  const t = text.trim();
  const kw = (/^[A-Za-z]+/.exec(t)?.[0] ?? '?').toUpperCase();
  if (kw === 'BEGIN' || kw === 'COMMIT' || kw === 'ROLLBACK' || kw === 'SET' || kw === 'LISTEN') return kw;
  const table = /\b(?:FROM|INTO|UPDATE)\s+(?:"?public"?\.)?"?([A-Za-z_]+)"?/i.exec(t)?.[1];
  return table ? `${kw} ${table}` : kw;
}

export function installStatementCounter(): StatementCounter {
  if (installed) return installed;
  const proto = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function countedQuery(this: unknown, ...args: unknown[]) {
    const first = args[0];
    const text = typeof first === 'string' ? first : ((first as { text?: string } | null)?.text ?? '');
    const shape = statementShape(text);
    counts.set(shape, (counts.get(shape) ?? 0) + 1);
    total++;
    return original.apply(this, args);
  };
  installed = {
    get total() {
      return total;
    },
    byShape: () => Object.fromEntries([...counts].sort((a, b) => b[1] - a[1])),
    reset: () => {
      counts.clear();
      total = 0;
    },
  };
  return installed;
}

/** The counter when HISHO_COUNT_SQL=1 (installed on first call), else null. */
export function statementCounterFromEnv(env: NodeJS.ProcessEnv = process.env): StatementCounter | null {
  return env.HISHO_COUNT_SQL === '1' ? installStatementCounter() : null;
}
