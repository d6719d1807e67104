// Applies prisma/migrations to DATABASE_URL (the service also does this at start-up).
import { applyMigrations } from '../src/db/migrate';

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.error('DATABASE_URL is not set. (`npm start` migrates its embedded database by itself.)');
    process.exit(2);
  }
  const res = await applyMigrations(url);
  const names = res.applied.length ? `: ${res.applied.join(', ')}` : '';
  console.log(`Applied ${res.applied.length} migration(s)${names}; ${res.alreadyApplied} already applied.`);
}
main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
