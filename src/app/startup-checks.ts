import net from 'node:net';
import { Client } from 'pg';
import { terminalLanguage, type OperatorLanguage } from '../config/operator-language';
import type { EmbeddedInUse } from '../db/postmaster-lock';
import { DirectoryImportError } from '../org/import-directory';
import { describeYamlSlip, type YamlSlip } from '../org/yaml-slips';

/**
 * A start-up failure the operator can fix: its message is one sentence that says what is wrong and what to
 * do (`npm start` prints it alone, without a stack trace). Japanese when the terminal's locale is Japanese
 * (LC_ALL / LC_MESSAGES / LANG), English otherwise, like the rest of the start-up output.
 */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

type Lang = OperatorLanguage;
export { terminalLanguage };

const say = (lang: Lang, ja: string, en: string) => new StartupError(lang === 'ja' ? ja : en);

/** A port to suggest instead of `port`. */
const otherPort = (port: number) => (port >= 65535 || port === 0 ? 3001 : port + 1);

/** The sentence for an HTTP listen error (port taken, or a privileged port); any other error as it is. */
export function listenFailure(err: NodeJS.ErrnoException, port: number, lang = terminalLanguage()): Error {
  const fix = `PORT=${otherPort(port)} npm start`;
  if (err.code === 'EADDRINUSE')
    return say(
      lang,
      `ポート${port}は別のプログラムが使用中のため Hisho を起動できません（そのプログラムを止めるか、空いているポートを指定してください: ${fix}）。`,
      `Hisho could not start: port ${port} is already in use by another program; stop that program or ` +
        `choose a free port, e.g. \`${fix}\`.`,
    );
  if (err.code === 'EACCES')
    return say(
      lang,
      `ポート${port}を使う権限がないため Hisho を起動できません（1024以上のポートを指定してください: PORT=3000 npm start）。`,
      `Hisho could not start: this user may not listen on port ${port}; choose a port above 1023, ` +
        'e.g. `PORT=3000 npm start`.',
    );
  return err;
}

/**
 * Fails fast, before the database and the adapters start, when the HTTP port is taken (the common first
 * contact: another service on 3000). The real listen still reports a port taken in between.
 */
export async function checkPortFree(port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => reject(listenFailure(err, port)));
    probe.listen(port, () => probe.close(() => resolve()));
  });
}

/** How long start-up waits for the configured database to answer. */
const DATABASE_ANSWER_MS = 10_000;

/**
 * Connects once to DATABASE_URL before anything else uses it: a database that does not answer, refuses the
 * login or lacks the named database stops start-up with one sentence (address shown, never the password).
 */
export async function checkDatabase(url: string, lang = terminalLanguage()): Promise<void> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: DATABASE_ANSWER_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    throw databaseFailure(err as Error & { code?: string }, url, lang);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function databaseFailure(err: Error & { code?: string }, url: string, lang: Lang): StartupError {
  let host = '?';
  let port = '5432';
  let name = '';
  try {
    const u = new URL(url);
    host = u.hostname || 'localhost';
    port = u.port || '5432';
    name = decodeURIComponent(u.pathname.replace(/^\//, ''));
  } catch {
    // Not a URL: the configuration check names DATABASE_URL before this runs.
  }
  const where = `${host}:${port}${name ? `/${name}` : ''}`;
  const fixJa = 'PostgreSQL を起動するか、DATABASE_URL を直すか、DATABASE_URL を外して内蔵データベースを使ってください';
  const fixEn = 'start PostgreSQL there, correct DATABASE_URL, or unset it to use the embedded database';
  const ssl = sslFailure(err, where, lang);
  if (ssl) return ssl;
  switch (err.code) {
    case '3D000':
      return say(
        lang,
        `データベース「${name}」が ${host}:${port} にないため Hisho を起動できません（作成してください: createdb -h ${host} -p ${port} ${name}）。`,
        `Hisho could not start: the database "${name}" does not exist on ${host}:${port}; create it ` +
          `(\`createdb -h ${host} -p ${port} ${name}\`) or correct DATABASE_URL.`,
      );
    case '28P01':
    case '28000':
      return say(
        lang,
        `データベース ${where} がユーザー名かパスワードを受け付けないため Hisho を起動できません（DATABASE_URL のユーザー名とパスワードを直してください）。`,
        `Hisho could not start: the database at ${where} refused the user name or password in DATABASE_URL; ` +
          'correct them.',
      );
  }
  const why: Record<string, [string, string]> = {
    ECONNREFUSED: ['接続を拒否されました', 'connection refused'],
    ENOTFOUND: [`ホスト名 ${host} が見つかりません`, `host name ${host} not found`],
    EAI_AGAIN: [`ホスト名 ${host} を引けません`, `host name ${host} could not be looked up`],
    ETIMEDOUT: [
      `${DATABASE_ANSWER_MS / 1000}秒以内に応答がありません`,
      `no answer within ${DATABASE_ANSWER_MS / 1000} s`,
    ],
    EHOSTUNREACH: ['ホストに届きません', 'host unreachable'],
    ENETUNREACH: ['ネットワークに届きません', 'network unreachable'],
  };
  const timedOut = /timeout/i.test(err.message);
  const [ja, en] = why[timedOut ? 'ETIMEDOUT' : (err.code ?? '')] ?? ['接続が切れました', 'the connection was closed'];
  return say(
    lang,
    `DATABASE_URL のデータベース（${where}）が応答しないため Hisho を起動できません（${ja}）: ${fixJa}。`,
    `Hisho could not start: the database in DATABASE_URL (${where}) does not answer (${en}); ${fixEn}.`,
  );
}

/** Certificate problems Node reports by code (a self-signed server, an unknown CA, a name mismatch, expired). */
const CERT_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/;

/** SSL asked for and not offered, offered and not asked for, or a certificate not trusted: said plainly. */
function sslFailure(err: Error & { code?: string }, where: string, lang: Lang): StartupError | null {
  if (/does not support SSL/i.test(err.message))
    return say(
      lang,
      `データベース ${where} は SSL 接続を受け付けませんが、DATABASE_URL が SSL を求めている（sslmode）ため ` +
        'Hisho を起動できません（信頼できるネットワーク内のサーバーなら DATABASE_URL から sslmode を外すか、サーバーの SSL を有効にしてください）。',
      `Hisho could not start: the database at ${where} does not accept SSL connections, but DATABASE_URL asks for ` +
        'SSL (sslmode); remove sslmode from DATABASE_URL for a server on a trusted network, or turn SSL on in the ' +
        'server.',
    );
  if (/SSL off|SSL connection is required|no encryption/i.test(err.message))
    return say(
      lang,
      `データベース ${where} は SSL 接続しか受け付けないため Hisho を起動できません` +
        '（DATABASE_URL の末尾に ?sslmode=require を付けてください）。',
      `Hisho could not start: the database at ${where} accepts SSL connections only; add ?sslmode=require to ` +
        'DATABASE_URL.',
    );
  if (err.code && CERT_CODES.test(err.code))
    return say(
      lang,
      `データベース ${where} の証明書を確かめられないため Hisho を起動できません（${err.code}）: 暗号化だけでよければ ` +
        'sslmode=require に、証明書も確かめるなら sslrootcert=CA証明書のパス を DATABASE_URL に付けてください。',
      `Hisho could not start: the certificate of the database at ${where} could not be verified (${err.code}); use ` +
        'sslmode=require to encrypt without checking it, or add sslrootcert=/path/to/ca.pem to DATABASE_URL.',
    );
  return null;
}

/**
 * The sentence for a directory file that cannot be imported: the file, the first problem with its line, how
 * many more there are and where to see them all, and what to do.
 */
export function directoryFailure(err: DirectoryImportError, lang = terminalLanguage()): StartupError {
  const file = err.fileName ?? 'ORG_DIRECTORY_FILE';
  const first = err.errors[0] ?? '';
  const line = /\s*\(line (\d+)\)$/.exec(first);
  const problem = line ? first.slice(0, line.index) : first;
  const more = err.errors.length - 1;
  const check = `npm run org:import -- ${file}`;
  if (/^cannot read the file/.test(first))
    return say(
      lang,
      `組織ディレクトリのファイル ${file} を読めないため Hisho を起動できません（ORG_DIRECTORY_FILE のパスを直してください）。`,
      `Hisho could not start: the organisation directory file ${file} cannot be read; correct the path in ` +
        'ORG_DIRECTORY_FILE.',
    );
  if (err.slip) return slipFailure(err.slip, file, lang);
  const moreJa = more > 0 ? `、ほか${more}件は ${check} で確認できます` : '';
  const moreEn = more > 0 ? `; ${more} more listed by \`${check}\`` : '';
  const atJa = line ? `${line[1]}行目` : '';
  const atEn = line ? ` on line ${line[1]}` : '';
  return say(
    lang,
    `Hisho を起動できません: 組織ディレクトリ ${file} の${atJa}の誤り（${problemJa(problem)}${moreJa}）を直してから起動し直してください。`,
    `Hisho could not start: the organisation directory ${file} has an error${atEn} (${problem}${moreEn}); ` +
      'correct it and start again.',
  );
}

/** The commonest directory problems in Japanese (`members[0].level: is required` → 「members[0].level がありません」). */
function problemJa(problem: string): string {
  const said: [RegExp, (m: RegExpExecArray) => string][] = [
    [/^(.+): is required$/, (m) => `${m[1]} がありません`],
    [/^(.+): unknown key$/, (m) => `${m[1]} は使えない項目です。綴りを確かめてください`],
    [/^(.+): must be one of: (.+)$/, (m) => `${m[1]} は ${m[2]} のどれかにしてください`],
    [/^(.+): must be (?:a number|an integer)$/, (m) => `${m[1]} は数字にしてください`],
    [/^(.+): must not be empty$/, (m) => `${m[1]} が空です`],
    [
      /^(.+): must be (?:a whole number )?between (\d+) and (\d+)$/,
      (m) => `${m[1]} は ${m[2]}〜${m[3]} の数字にしてください`,
    ],
    [
      /^(.+): must be a Discord (?:user|guild) id in quotes, e\.g\. (".+")$/,
      (m) => `${m[1]} は Discord の ID を " で囲んで書いてください（例: ${m[2]}）`,
    ],
    [/^(.+): the environment variable (\S+) is not set$/, (m) => `${m[1]} が使う環境変数 ${m[2]} が設定されていません`],
  ];
  for (const [re, ja] of said) {
    const m = re.exec(problem);
    if (m) return ja(m);
  }
  return problem;
}

/**
 * The embedded database's folder is held by a running server: another `npm start` (say so, with its PID: the port
 * it listens on is not the problem), or a PostgreSQL an earlier start left behind (how to stop it).
 */
export function embeddedInUseFailure(err: EmbeddedInUse, lang = terminalLanguage()): StartupError {
  const { dataDir, hishoPid, postgresPid } = err;
  if (hishoPid !== null)
    return say(
      lang,
      `Hisho はすでに起動しています（PID ${hishoPid}、データフォルダ ${dataDir}）: 先にそちらを止める` +
        `（kill ${hishoPid}）か、2つ目は共有の PostgreSQL（DATABASE_URL）で動かしてください（README.ja.md「10. 2 台で動かす」）。`,
      `Hisho is already running (PID ${hishoPid}) on the data folder ${dataDir}; stop it first ` +
        `(\`kill ${hishoPid}\`), or run a second instance on a shared PostgreSQL server ` +
        '(DATABASE_URL; docs/operations.md "Two instances").',
    );
  return say(
    lang,
    `以前の起動で残った内蔵 PostgreSQL（PID ${postgresPid}）がデータフォルダ ${dataDir} を使っているため ` +
      `Hisho を起動できません（止めてから起動し直してください: kill -INT ${postgresPid}）。`,
    `Hisho could not start: an embedded PostgreSQL (PID ${postgresPid}) left running by an earlier start still ` +
      `holds the data folder ${dataDir}; stop it (\`kill -INT ${postgresPid}\`) and start again.`,
  );
}

/** A typing slip in the directory file as one sentence: where, what was typed, and what to type instead. */
function slipFailure(slip: YamlSlip, file: string, lang: Lang): StartupError {
  const at = `組織ディレクトリ ${file} の${slip.line}行目`;
  const en = `Hisho could not start: the organisation directory ${file} has a typing slip on line ${slip.line}: `;
  const what = describeYamlSlip(slip).replace(/ \(line \d+\)$/, '');
  switch (slip.kind) {
    case 'full_width_colon':
      return say(
        lang,
        `${at}「${slip.text}」のコロンが全角「：」のため Hisho を起動できません（半角のコロンと空白で「${slip.fixed}」と書き直してください）。`,
        `${en}${what}.`,
      );
    case 'full_width_space':
      return say(
        lang,
        `${at}の字下げに全角スペースが入っているため Hisho を起動できません（半角スペースに置き換えてください）。`,
        `${en}${what}.`,
      );
    case 'full_width_char':
      return say(
        lang,
        `${at}「${slip.text}」に全角の空白か数字が入っているため Hisho を起動できません（半角で「${slip.fixed}」と書き直してください）。`,
        `${en}${what}.`,
      );
    case 'tab':
      return say(
        lang,
        `${at}の字下げにタブが入っているため Hisho を起動できません（YAML ではタブが使えないので、半角スペースに置き換えてください）。`,
        `${en}${what}.`,
      );
    case 'no_space':
      return say(
        lang,
        `${at}「${slip.text}」のコロンの後に空白がないため Hisho を起動できません（「${slip.fixed}」と書いてください）。`,
        `${en}${what}.`,
      );
    case 'indent':
      return say(
        lang,
        `${at}の字下げ（空白${slip.indent}個）が上の行（${slip.expected}個）とそろっていないため Hisho を起動できません` +
          '（同じ項目のキーは同じ位置から書き始めてください）。',
        `${en}${what}.`,
      );
  }
}
