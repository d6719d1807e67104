// `npm start`: runs the compiled service (dist/src/main.js) in this process; compiles it first when dist/
// is missing or older than the sources (first start after install or after a change), and says so.
const path = require('node:path');
const { ensureBuilt, dist } = require('./dist');

try {
  ensureBuilt();
} catch (err) {
  console.error(`[hisho] Could not compile the service: ${err.message}. Run \`npm run build\` to see the errors.`);
  process.exit(1);
}
require(path.join(dist, 'src', 'main.js'));
