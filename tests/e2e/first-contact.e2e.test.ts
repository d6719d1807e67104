import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase } from '../helpers/db';
import { runService } from '../helpers/process';

/**
 * Issue 32, first contact: `npm start` with the port taken, a database that does not answer, or a directory
 * file with an error stops with one sentence that says what is wrong and what to do — no stack trace.
 */
describe('npm start: the first-contact failures are one sentence with the fix', () => {
  /** Runs `npm start` until it exits; its stderr and stdout apart. */
  const start = async (env: Record<string, string>) => {
    const p = runService(env, 30000);
    p.ready.catch(() => undefined);
    let stderr = '';
    p.child.stderr!.on('data', (d) => {
      stderr += String(d);
    });
    const timer = setTimeout(() => p.child.kill('SIGKILL'), 30000);
    const code = await p.exited;
    clearTimeout(timer);
    return { code, stderr: stderr.trim(), output: p.output() };
  };
  /** One line, no stack frames, no raw error event dump. */
  const oneSentence = (text: string) => {
    expect(text.split('\n')).toHaveLength(1);
    expect(text).not.toMatch(/\n\s+at |Unhandled|node:events|errno|EADDRINUSE|ECONNREFUSED/);
  };
  const freePort = () =>
    new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, () => {
        const port = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(port));
      });
    });

  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hisho-first-contact-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('the port is taken by another program: says so and how to start on another port', async () => {
    const other = net.createServer((c) => c.end());
    await new Promise<void>((r) => other.listen(0, () => r()));
    const port = (other.address() as net.AddressInfo).port;
    try {
      const t = await createTestDatabase();
      await t.close();
      const en = await start({ DATABASE_URL: t.url, PORT: String(port) });
      expect(en.code).toBe(1);
      oneSentence(en.stderr);
      expect(en.stderr).toBe(
        `Hisho could not start: port ${port} is already in use by another program; stop that program or ` +
          `choose a free port, e.g. \`PORT=${port + 1} npm start\`.`,
      );
      expect(en.output.trim()).toBe(en.stderr);

      // A Japanese terminal is told in Japanese.
      const ja = await start({ DATABASE_URL: t.url, PORT: String(port), LANG: 'ja_JP.UTF-8' });
      expect(ja.code).toBe(1);
      oneSentence(ja.stderr);
      expect(ja.stderr).toBe(
        `ポート${port}は別のプログラムが使用中のため Hisho を起動できません` +
          `（そのプログラムを止めるか、空いているポートを指定してください: PORT=${port + 1} npm start）。`,
      );
    } finally {
      other.close();
    }
  }, 60000);

  it('DATABASE_URL does not answer: names the address (never the password) and the three ways out', async () => {
    const port = await freePort();
    const r = await start({ DATABASE_URL: `postgresql://hisho:s3cret-pw@127.0.0.1:${port}/hisho`, PORT: '0' });
    expect(r.code).toBe(1);
    oneSentence(r.stderr);
    expect(r.stderr).toBe(
      `Hisho could not start: the database in DATABASE_URL (127.0.0.1:${port}/hisho) does not answer ` +
        '(connection refused); start PostgreSQL there, correct DATABASE_URL, or unset it to use the embedded database.',
    );
    expect(r.output).not.toContain('s3cret-pw');

    // The server answers but the database named in the URL does not exist: how to create it.
    const server = new URL(process.env.HISHO_TEST_SERVER_URL!);
    server.pathname = '/hisho_no_such_database';
    const missing = await start({ DATABASE_URL: server.toString(), PORT: '0' });
    expect(missing.code).toBe(1);
    oneSentence(missing.stderr);
    expect(missing.stderr).toContain('the database "hisho_no_such_database" does not exist');
    expect(missing.stderr).toContain('createdb -h');
  }, 60000);

  it('a directory file with an error: the file, the line, the problem, how many more, and the fix', async () => {
    const sample = fs.readFileSync(path.resolve(__dirname, '..', '..', 'config', 'org.sample.yaml'), 'utf8');
    const lines = sample.split('\n');
    // The first member's `level:` mistyped, as a person editing the file would.
    const at = lines.findIndex((l) => l === '    level: 6');
    expect(at).toBeGreaterThan(0);
    lines[at] = '    levl: 6';
    const file = path.join(dir, 'org.yaml');
    fs.writeFileSync(file, lines.join('\n'));
    const t = await createTestDatabase();
    try {
      const r = await start({ DATABASE_URL: t.url, PORT: '0', ORG_DIRECTORY_FILE: file });
      expect(r.code).toBe(1);
      oneSentence(r.stderr);
      // The file and its first problem (by line); the mistyped key is the second one.
      expect(r.stderr).toMatch(
        new RegExp(
          `^Hisho could not start: the organisation directory ${file} has an error on line \\d+ ` +
            '\\(members\\[0\\]\\.level: is required; 1 more listed by `npm run org:import -- .*`\\); ' +
            'correct it and start again\\.$',
        ),
      );
      const line = Number(/on line (\d+)/.exec(r.stderr)![1]);
      expect(lines[line - 1]).toMatch(/^ {2}- id: /);
      // Nothing was imported.
      expect(await t.db.organization.count()).toBe(0);

      // A YAML syntax error names its line too; in Japanese on a Japanese terminal.
      fs.writeFileSync(file, 'organization:\n  id: acme\n  name: [unclosed\n');
      const ja = await start({ DATABASE_URL: t.url, PORT: '0', ORG_DIRECTORY_FILE: file, LANG: 'ja_JP.UTF-8' });
      expect(ja.code).toBe(1);
      oneSentence(ja.stderr);
      expect(ja.stderr).toMatch(
        /^Hisho を起動できません: 組織ディレクトリ .*org\.yaml の4行目の誤り（YAML syntax error: .*）を直して/,
      );
    } finally {
      await t.close();
    }
  }, 60000);
});
