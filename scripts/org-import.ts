// `npm run org:import -- FILE`: validates an organisation directory file (YAML/JSON, SPEC §4) and imports
// it into DATABASE_URL in one transaction (migrations are applied first). Exit codes: 0 imported,
// 1 invalid file or failed import, 2 usage (no file, or DATABASE_URL unset).
import fs from 'node:fs';
import { applyMigrations } from '../src/db/migrate';
import { createDb } from '../src/db/prisma';
import { DirectoryImportError, formatImportSummary, importDirectoryFile } from '../src/org/import-directory';
import { parseDirectory } from '../src/org/parse-directory';

const USAGE = 'Usage: npm run org:import -- FILE   (e.g. npm run org:import -- config/org.sample.yaml)';

async function main(): Promise<number> {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  if (args.includes('-h') || args.includes('--help')) {
    console.log(USAGE);
    return 0;
  }
  const file = args[0] ?? process.env.ORG_DIRECTORY_FILE;
  if (!file || args.length > 1) {
    console.error(USAGE);
    return 2;
  }
  const url = process.env.DATABASE_URL;
  if (!url) return validateOnly(file);

  await applyMigrations(url);
  const db = createDb({ url, poolMax: 2 });
  try {
    const summary = await importDirectoryFile(db, file);
    console.log(`Imported ${file}\n${formatImportSummary(summary)}`);
    return 0;
  } finally {
    await db.$disconnect();
  }
}

/** Without DATABASE_URL there is nowhere to import to: still check the file, then explain. */
function validateOnly(file: string): number {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    console.error(`Cannot read ${file}: ${(err as Error).message}`);
    return 1;
  }
  const parsed = parseDirectory(text, file);
  if (!parsed.ok) {
    console.error(new DirectoryImportError(parsed.errors, file).message);
    return 1;
  }
  const d = parsed.directory;
  console.error(
    [
      `${file} is valid (organisation "${d.organization.id}", ${d.members.length} members, ` +
        `${d.departments.length} departments, ` +
        `${d.rooms.length} rooms, ${d.policies.length} policies, ${d.schedules.length} schedules), but ` +
        `nothing was imported:`,
      'org:import needs DATABASE_URL (postgresql://user:password@host:5432/db) to know which database to write to.',
      'Without DATABASE_URL, `npm start` uses its embedded database under ./data and imports ' +
        'ORG_DIRECTORY_FILE itself',
      `at start-up: ORG_DIRECTORY_FILE=${file} npm start`,
    ].join('\n'),
  );
  return 2;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(err instanceof DirectoryImportError ? err.message : `org:import failed: ${err.message}`);
    process.exit(1);
  },
);
