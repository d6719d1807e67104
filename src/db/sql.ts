import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import type { Db } from './prisma';

/** A parameterised SQL runner ($1, $2 … placeholders) returning rows. */
export type Sql = <T = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]>;

/**
 * Raw SQL for the few hot-path statements: straight on the `pg` pool when there is one (about a quarter
 * of the ORM's cost per statement), through Prisma otherwise (tests and tools that only have a client).
 * Column values come back as `pg` gives them: bigint ids are selected `::text` by callers.
 */
export function sqlRunner(db: Db, pool?: Pool): Sql {
  if (pool)
    return async <T>(text: string, params: unknown[] = []) =>
      (await pool.query({ text, values: params, name: statementName(text) })).rows as T[];
  return <T>(text: string, params: unknown[] = []) => db.$queryRawUnsafe<T[]>(text, ...params);
}

/** Distinct statement texts that get a prepared statement on each connection (the rest run unnamed). */
const MAX_PREPARED = 500;
const preparedNames = new Map<string, string>();

/**
 * The prepared-statement name of a statement text: each connection parses a hot statement once, and after five
 * executions PostgreSQL may keep a generic plan instead of planning it again (its parse and plan are a large part
 * of its CPU per short statement; decision 0008: PostgreSQL's CPU per message nearly halves).
 * Named by a hash of the text, so the same text gets the same name on every connection and thread. Texts
 * beyond the first {@link MAX_PREPARED} run unnamed, so composed statements cannot grow without bound.
 */
export function statementName(text: string): string | undefined {
  const known = preparedNames.get(text);
  if (known !== undefined || preparedNames.size >= MAX_PREPARED) return known;
  const name = `h_${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`;
  preparedNames.set(text, name);
  return name;
}

/**
 * Numbered parameters of one composed statement: each fragment adds its values and writes the
 * placeholders it got (`$1`, `$2` …), so fragments from different owners combine into one statement.
 */
export class SqlParams {
  readonly values: unknown[] = [];

  /** The placeholder of a new parameter with value `v`. */
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

/** Text without NUL characters (PostgreSQL text and jsonb cannot hold them). */
export function pgText(s: string): string {
  // eslint-disable-next-line no-control-regex -- NUL is exactly what must go
  return s.replace(/\u0000/g, '');
}
