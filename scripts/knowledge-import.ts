// `npm run knowledge:import -- PATH [--org ID]`: imports Markdown and text files (a folder, recursively, or one file)
// into the organisation's knowledge (R-X4, docs/operations.md "Knowledge documents"). Writes to DATABASE_URL, or — when
// it is unset — to the embedded database under EMBEDDED_DATA_DIR (./data) that `npm start` uses (stop the service
// first: the embedded server serves one process). Migrations are applied first. Exit codes: 0 imported (files may have
// been skipped: see the summary), 1 failed, 2 usage. Settings come from the environment over `.env`
// (KNOWLEDGE_MAX_BYTES, KNOWLEDGE_DEFAULT_LEVEL, DATABASE_URL, EMBEDDED_DATA_DIR).
import path from 'node:path';
import { environment } from '../src/config/env';
import { applyMigrations } from '../src/db/migrate';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded-postgres';
import { createDb } from '../src/db/prisma';
import { formatImportSummary, importDirectoryFile } from '../src/org/import-directory';
import { knowledgeConfig } from '../src/context/knowledge/config';
import { formatKnowledgeSummary, importKnowledge, KnowledgeImportError } from '../src/context/knowledge/import';

/** The directory `npm start` imports into an empty database (src/app/create-hisho.ts SAMPLE_DIRECTORY). */
const SAMPLE_DIRECTORY = path.resolve(__dirname, '..', 'config', 'org.sample.yaml');

const USAGE =
  'Usage: npm run knowledge:import -- PATH [--org ORG_ID]   (PATH: a folder of .md/.txt files, or one file)';

async function main(): Promise<number> {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  if (args.includes('-h') || args.includes('--help')) {
    console.log(USAGE);
    return 0;
  }
  let org: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--org') org = args[++i];
    else rest.push(args[i]!);
  }
  if (rest.length !== 1 || (args.includes('--org') && !org)) {
    console.error(USAGE);
    return 2;
  }
  const env = environment();
  const config = knowledgeConfig(env);
  let embedded: EmbeddedDatabase | null = null;
  let url = env.DATABASE_URL || undefined;
  if (!url) {
    embedded = await startEmbeddedPostgres({ dataDir: env.EMBEDDED_DATA_DIR || './data', persistent: true });
    url = embedded.url;
    console.log(`DATABASE_URL unset: using the embedded database in ${embedded.dataDir}`);
  }
  try {
    await applyMigrations(url);
    const db = createDb({ url, poolMax: 2 });
    try {
      if ((await db.organization.count()) === 0) {
        // An empty database gets its directory first, as `npm start` does: ORG_DIRECTORY_FILE, else the sample.
        const file = env.ORG_DIRECTORY_FILE || SAMPLE_DIRECTORY;
        const imported = formatImportSummary(await importDirectoryFile(db, file));
        console.log(`No organisation yet: imported the directory ${file}\n${imported}`);
      }
      const orgs = await db.organization.findMany({ select: { id: true }, orderBy: { createdAt: 'asc' } });
      const orgId = org ?? (orgs.length === 1 ? orgs[0]!.id : undefined);
      if (!orgId || !orgs.some((o) => o.id === orgId)) {
        console.error(
          org
            ? `No organisation "${org}" in this database (there are: ${orgs.map((o) => o.id).join(', ')}).`
            : `Name the organisation with --org (one of: ${orgs.map((o) => o.id).join(', ')}).`,
        );
        return 1;
      }
      const summary = await importKnowledge(db, { orgId, path: rest[0]!, config });
      console.log(`Imported ${rest[0]} into organisation "${orgId}"\n${formatKnowledgeSummary(summary)}`);
      return 0;
    } finally {
      await db.$disconnect();
    }
  } finally {
    if (embedded) await embedded.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(err instanceof KnowledgeImportError ? err.message : `knowledge:import failed: ${err.message}`);
    process.exit(1);
  },
);
