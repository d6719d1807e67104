import fs from 'node:fs';
import path from 'node:path';
import { ZEnv, ZTracingEnv } from '../../src/config/env';

const root = path.resolve(__dirname, '..', '..');
const read = (f: string) => fs.readFileSync(path.join(root, f), 'utf8');
const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
const variables = new Set([...Object.keys(ZEnv.shape), ...Object.keys(ZTracingEnv.shape)]);

/** Read by other programs than the service: Node.js itself, the shell's locale, the scripts beside it. */
const NOT_THE_SERVICE: Record<string, string> = {
  NODE_EXTRA_CA_CERTS: 'Node.js (extra CA certificates)',
  LANG: "the terminal's locale (start-up messages in Japanese for ja_*)",
  KNOWLEDGE_MAX_BYTES: 'npm run knowledge:import',
  KNOWLEDGE_DEFAULT_LEVEL: 'npm run knowledge:import',
  EVAL_CONCURRENCY: 'npm run eval',
  OTEL_SERVICE_NAME: 'the OpenTelemetry SDK',
  KINTONE_TOKEN: "an operator's own secret, named in mcp_servers as ${KINTONE_TOKEN} (the guide's example)",
};

/** Every `NAME_LIKE_THIS` a document names as a setting, and every `npm run X` / `npm X` command. */
function named(text: string): { vars: string[]; commands: string[] } {
  const vars = [
    ...new Set([
      ...[...text.matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g)].map((m) => m[0]),
      // One-word settings where they are set: `PERSONA=soul`.
      ...[...text.matchAll(/(?<![\w/])([A-Z][A-Z0-9]{2,})=/g)].map((m) => m[1]!),
    ]),
  ];
  const commands = [
    ...new Set(
      [...text.matchAll(/\bnpm (?:run (?:--silent )?)?([a-z][a-z:-]*)/g)].map((m) => m[0].replace(' --silent', '')),
    ),
  ];
  return { vars, commands };
}

const NPM_OWN = new Set(['install', 'ci', 'start', 'test']);
const commandExists = (c: string) => {
  const [, run, name] = /^npm (run )?(.+)$/.exec(c)!;
  return run ? scripts.includes(name!) : NPM_OWN.has(name!) || scripts.includes(name!);
};

/**
 * Issue 41: the Japanese operator's guide stays true — every setting it names is one the service reads (or Node.js,
 * or a named script), every npm command it names exists, every file it links to is there — and `.env.example`
 * documents every variable the service reads, each with a Japanese line.
 */
describe("the operator's guide and .env.example tell the truth", () => {
  it('README.ja.md names only real settings, commands and files, and README.md links to it at the top', () => {
    const guide = read('README.ja.md');
    const { vars, commands } = named(guide);
    expect(vars.filter((v) => !variables.has(v) && !(v in NOT_THE_SERVICE))).toEqual([]);
    expect(commands.filter((c) => !commandExists(c))).toEqual([]);
    // What an operator needs is all there.
    for (const v of ['ANTHROPIC_API_KEY', 'CHATWORK_API_TOKEN', 'CHATWORK_WEBHOOK_TOKEN', 'DISCORD_BOT_TOKEN'])
      expect(vars).toContain(v);
    for (const v of ['ORG_DIRECTORY_FILE', 'ADMIN_TOKEN', 'PERSONA', 'PERSONA_FILE', 'HTTPS_PROXY', 'DATABASE_URL'])
      expect(vars).toContain(v);
    for (const c of ['npm install', 'npm start', 'npm run backup', 'npm run restore', 'npm run org:import'])
      expect(commands).toContain(c);
    const links = [...guide.matchAll(/\]\(([^)#:]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!);
    expect(links.filter((l) => !fs.existsSync(path.join(root, l)))).toEqual([]);
    expect(read('README.md').split('\n').slice(0, 5).join('\n')).toContain('[README.ja.md](README.ja.md)');
  });

  it('README.md names only real npm commands', () => {
    const { commands } = named(read('README.md'));
    expect(commands.filter((c) => !commandExists(c))).toEqual([]);
  });

  it('.env.example lists every variable the service reads, nothing else, each with a Japanese explanation', () => {
    const example = read('.env.example');
    const lines = example.split('\n');
    const listed = lines.map((l) => /^([A-Z][A-Z0-9_]*)=/.exec(l)?.[1]).filter((v): v is string => v !== undefined);
    expect(listed.filter((v) => !variables.has(v) && !(v in NOT_THE_SERVICE))).toEqual([]);
    const optional = new Set([
      'NODE_ENV',
      'OTEL_SDK_DISABLED',
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
      'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
    ]);
    expect([...variables].filter((v) => !optional.has(v) && !listed.includes(v))).toEqual([]);
    const japanese = /[ぁ-んァ-ヶ一-龠]/;
    const withoutJapanese = listed.filter((v) => {
      const at = lines.findIndex((l) => l.startsWith(`${v}=`));
      const comments: string[] = [];
      for (let i = at - 1; i >= 0 && lines[i]!.startsWith('#'); i--) comments.push(lines[i]!);
      return !comments.some((c) => japanese.test(c));
    });
    expect(withoutJapanese).toEqual([]);
  });
});
