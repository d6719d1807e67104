import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * The architecture stays visible (docs/architecture.md): no two folders of `src/` import each other, directly or
 * through others, and every table has one writer. `scripts/measure-structure.ts` measures both; this keeps them.
 */
describe('the structure of src/', () => {
  const root = path.resolve(__dirname, '..', '..');
  const report = execFileSync(process.execPath, ['--import', 'tsx', 'scripts/measure-structure.ts'], {
    cwd: root,
    encoding: 'utf8',
  });

  it('has no import loop between folders', () => {
    expect(report).toContain('folders importing each other (pairs): 0');
    expect(report).toContain('folder cycles (strongly connected groups): 0');
  });

  it('has one writer per table', () => {
    expect(report).toMatch(/tables written: \d+; written from more than one file: 0/);
  });
});
