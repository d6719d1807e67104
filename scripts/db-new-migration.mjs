// Creates prisma/migrations/<stamp>_<name>/migration.sql offline, by diffing the schema as of the newest
// migration (kept beside it as schema.snapshot.prisma) with prisma/schema.prisma.
// Why not `prisma migrate dev`: the Prisma CLI downloads a native schema engine that this environment
// cannot fetch; Prisma's own WebAssembly schema engine does the same diff (see README, "Database").
import { readFile, writeFile, mkdir, readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const migrationsDir = path.join(root, 'prisma', 'migrations');

async function loadEngine() {
  const pkgDir = path.dirname(require.resolve('@prisma/schema-engine-wasm'));
  const bg = await import(path.join(pkgDir, 'schema_engine_bg.js'));
  const bytes = await readFile(path.join(pkgDir, 'schema_engine_bg.wasm'));
  const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': bg });
  bg.__wbg_set_wasm(instance.exports);
  instance.exports.__wbindgen_start?.();
  return bg.SchemaEngine;
}

async function main() {
  const name = (process.argv[2] ?? '').trim();
  if (!/^[a-z0-9_]+$/.test(name)) {
    console.error('usage: npm run db:new-migration -- <name>   (lower-case letters, digits, _)');
    process.exit(2);
  }
  const schema = await readFile(path.join(root, 'prisma', 'schema.prisma'), 'utf8');
  await mkdir(migrationsDir, { recursive: true });
  const existing = (await readdir(migrationsDir, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  const last = existing.at(-1);
  const previous = last ? await readFile(path.join(migrationsDir, last, 'schema.snapshot.prisma'), 'utf8') : null;

  const SchemaEngine = await loadEngine();
  const { PrismaPg } = require('@prisma/adapter-pg');
  const { bindMigrationAwareSqlAdapterFactory } = require('@prisma/driver-adapter-utils');
  const adapter = bindMigrationAwareSqlAdapterFactory(
    new PrismaPg({ connectionString: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres' }),
  );
  const engine = await SchemaEngine.new({ datamodels: [['schema.prisma', schema]] }, () => {}, adapter);
  const filters = { externalTables: [], externalEnums: [] };
  const from = previous
    ? { tag: 'schemaDatamodel', files: [{ path: 'schema.prisma', content: previous }] }
    : { tag: 'empty' };
  const to = { tag: 'schemaDatamodel', files: [{ path: 'schema.prisma', content: schema }] };
  const result = await engine.diff({ from, to, script: true, exitCode: null, filters });
  const sql = result.stdout ?? result.script ?? '';
  if (!sql.trim() || /This is an empty migration/.test(sql)) {
    console.log('No schema changes: no migration created.');
    return;
  }
  const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
  const dir = path.join(migrationsDir, `${stamp}_${name}`);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'migration.sql'), sql);
  await writeFile(path.join(dir, 'schema.snapshot.prisma'), schema);
  await writeFile(path.join(migrationsDir, 'migration_lock.toml'), 'provider = "postgresql"\n');
  console.log(`Created ${path.relative(root, dir)}/migration.sql`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
