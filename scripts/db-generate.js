// Generates the Prisma client into src/generated/prisma (runs on `npm install`).
// The Prisma CLI wants a native schema-engine binary it downloads from a host that may be unreachable;
// `generate` does not use it, so point the variable at any executable (node itself).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const cli = path.join(root, 'node_modules', 'prisma', 'build', 'index.js');
if (!fs.existsSync(cli)) {
  console.warn('[db:generate] prisma CLI not installed (production install?): skipping client generation');
  process.exit(0);
}
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
if (!env.PRISMA_SCHEMA_ENGINE_BINARY) env.PRISMA_SCHEMA_ENGINE_BINARY = process.execPath;
const res = spawnSync(process.execPath, [cli, 'generate', '--schema', 'prisma/schema.prisma'], {
  cwd: root,
  env,
  stdio: 'inherit',
});
process.exit(res.status ?? 1);
