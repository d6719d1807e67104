// Prisma 7 reads the connection URL from here (not from schema.prisma). Used by the stock CLI
// (`prisma migrate deploy`) where it can run; the project's own commands do not need it.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? '' },
});
