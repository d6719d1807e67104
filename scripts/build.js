// `npm run build`: compiles the service to dist/ with its run-time files (see scripts/dist.js).
const { build } = require('./dist');

try {
  const ms = build();
  console.log(`[hisho] dist/ built in ${(ms / 1000).toFixed(1)} s`);
} catch (err) {
  console.error(`[hisho] ${err.message}`);
  process.exit(1);
}
