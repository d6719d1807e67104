// `npm run org:import -- FILE`: validates an organisation directory file (YAML/JSON, SPEC §4) and imports
// it into DATABASE_URL (the environment, else .env, as `npm start` reads it) in one transaction (migrations are
// applied first). Exit codes: 0 imported, 1 invalid file or failed import, 2 usage (no file, or DATABASE_URL unset).
import fs from 'node:fs';
import { applyMigrations } from '../src/db/migrate';
import { createDb } from '../src/db/prisma';
import { DirectoryImportError, formatImportSummary, importDirectoryFile } from '../src/org/import-directory';
import { parseDirectory } from '../src/org/parse-directory';
import { environment } from '../src/config/env';
import { terminalLanguage } from '../src/config/operator-language';

const USAGE = 'Usage: npm run org:import -- FILE   (e.g. npm run org:import -- config/org.sample.yaml)';

async function main(): Promise<number> {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  if (args.includes('-h') || args.includes('--help')) {
    console.log(USAGE);
    return 0;
  }
  // DATABASE_URL and ORG_DIRECTORY_FILE as `npm start` reads them: the environment, else .env.
  const env = environment();
  const file = args[0] ?? (env.ORG_DIRECTORY_FILE || undefined);
  if (!file || args.length > 1) {
    console.error(USAGE);
    return 2;
  }
  const url = env.DATABASE_URL || undefined;
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
  // What to do instead, in the operator's language; the embedded database's folder is not always ./data (as root
  // it is under /var/lib/hisho), and Hisho imports ORG_DIRECTORY_FILE itself at every start.
  console.error(
    terminalLanguage() === 'ja'
      ? `${file} は正しく書けています（組織「${d.organization.id}」、メンバー ${d.members.length} 人、` +
          `部署 ${d.departments.length}、ルーム ${d.rooms.length}、ルール ${d.policies.length}、` +
          `定期通知 ${d.schedules.length}）が、取り込んではいません: org:import は外部の PostgreSQL（DATABASE_URL）` +
          `に書き込むためのものです。内蔵データベースなら .env に ORG_DIRECTORY_FILE=${file} と書いて Hisho を` +
          '起動し直すと、起動時に取り込まれます。'
      : [
          `${file} is valid (organisation "${d.organization.id}", ${d.members.length} members, ` +
            `${d.departments.length} departments, ` +
            `${d.rooms.length} rooms, ${d.policies.length} policies, ${d.schedules.length} schedules), but ` +
            `nothing was imported:`,
          'org:import needs DATABASE_URL (postgresql://user:password@host:5432/db) to know which database to write to.',
          'Without DATABASE_URL, `npm start` uses its embedded database and imports ORG_DIRECTORY_FILE itself at',
          `start-up: set ORG_DIRECTORY_FILE=${file} in .env and restart Hisho.`,
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
