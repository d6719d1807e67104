import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '../helpers/db';

const root = path.resolve(__dirname, '..', '..');
const tsx = path.join(root, 'node_modules', '.bin', 'tsx');

/** `npm run org:import -- FILE` as an operator runs it: in the project folder, settings in its .env only. */
function orgImport(cwd: string, file: string, lang: string) {
  return spawnSync(tsx, [path.join(root, 'scripts', 'org-import.ts'), file], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LANG: lang },
    timeout: 60000,
  });
}

/**
 * Issue 41 QA: the guide says every setting goes in .env and that `npm run org:import` imports into the external
 * PostgreSQL while Hisho runs; the script read DATABASE_URL from the environment only, so with it in .env it
 * refused ("needs DATABASE_URL") and, in English whatever LANG, sent operators to "./data".
 */
describe('npm run org:import reads .env like npm start', () => {
  let t: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    t = await createTestDatabase();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-org-import-'));
    fs.copyFileSync(path.join(root, 'config', 'org.sample.yaml'), path.join(dir, 'org.yaml'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('imports into the DATABASE_URL written in .env', async () => {
    fs.writeFileSync(path.join(dir, '.env'), `DATABASE_URL=${t.url}\n`);
    const r = orgImport(dir, 'org.yaml', 'ja_JP.UTF-8');
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain('Imported org.yaml');
    expect(await t.db.member.count({ where: { orgId: 'acme' } })).toBe(8);
  }, 90000);

  it('without DATABASE_URL it says in Japanese what to do instead, without a folder that may not be it', () => {
    fs.writeFileSync(path.join(dir, '.env'), 'DATABASE_URL=\n');
    const r = orgImport(dir, 'org.yaml', 'ja_JP.UTF-8');
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(
      'org.yaml は正しく書けています（組織「acme」、メンバー 8 人、部署 6、ルーム 4、ルール 3、定期通知 3）が、' +
        '取り込んではいません: org:import は外部の PostgreSQL（DATABASE_URL）に書き込むためのものです。' +
        '内蔵データベースなら .env に ORG_DIRECTORY_FILE=org.yaml と書いて Hisho を起動し直すと、起動時に取り込まれます。',
    );
    const en = orgImport(dir, 'org.yaml', 'C.UTF-8');
    expect(en.status).toBe(2);
    expect(en.stderr).toContain('set ORG_DIRECTORY_FILE=org.yaml in .env and restart Hisho.');
    expect(en.stderr).not.toContain('./data');
  }, 60000);
});
