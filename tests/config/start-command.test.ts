import fs from 'node:fs';
import path from 'node:path';
import { START } from '../helpers/process';

/** `npm start`, the benchmark and the process tests run the service the same way (issue 10: its memory flags). */
describe('the start command', () => {
  it("package.json's start script is the one scripts/start-command.js describes", () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.start).toBe(START.startScript);
    expect(START.NODE_FLAGS).toContain('--max-semi-space-size=2');
    expect(START.NODE_FLAGS).toContain('--liftoff-only');
    expect(START.NODE_FLAGS).toContain('--heap-growing-percent=50');
    expect(START.NODE_FLAGS).toContain('--single-threaded-gc');
  });
});
