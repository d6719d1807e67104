import { AppError } from '../core/app-error';

/**
 * Why the model cannot be used at all — a setup problem, not a busy moment (issue 41): the key is rejected, the
 * model is unknown, the API's host cannot be reached (DNS, refused, no route, no answer), the proxy is in the way,
 * or a certificate is not trusted. Each is said in one sentence with its fix: English for the log, Japanese for
 * /admin and the admin alert. A busy API (429, 5xx, overloaded) or one slow answer is not one of these.
 */
export type LlmProblemCause = 'key_rejected' | 'model_unknown' | 'no_route' | 'proxy' | 'tls';

export interface LlmProblem {
  cause: LlmProblemCause;
  en: string;
  ja: string;
}

/**
 * The model cannot be used until an operator fixes something: `LLM_NOT_CONFIGURED` (the key or the model) or
 * `LLM_UNREACHABLE` (the network). The person hears that the AI is not available and the administrator was told.
 */
export class LlmConnectionError extends AppError {
  constructor(
    readonly problem: LlmProblem,
    opts: { cause?: unknown } = {},
  ) {
    const setup = problem.cause === 'key_rejected' || problem.cause === 'model_unknown';
    super(setup ? 'LLM_NOT_CONFIGURED' : 'LLM_UNREACHABLE', problem.en, { cause: opts.cause, retryable: false });
    this.name = 'LlmConnectionError';
  }
}

/** The problem an API answer's status says, for the one who configured `model` (401, 403, 404), or null. */
export function statusProblem(status: number | undefined, type: string | undefined, model: string): LlmProblem | null {
  const what = `${status}${type ? ` ${type}` : ''}`;
  if (status === 401)
    return {
      cause: 'key_rejected',
      en: `The Anthropic API rejected the key in ANTHROPIC_API_KEY (${what}): set a valid key in .env and restart.`,
      ja: 'Anthropic API がAIのキーを受け付けません: .env のキーを正しいものにして、再起動してください。',
    };
  if (status === 403)
    return {
      cause: 'key_rejected',
      en:
        `The Anthropic API does not let this key use it (${what}): check the key and its organisation in the ` +
        'Anthropic Console.',
      ja: 'Anthropic API がこのキーでの利用を許可していません: Anthropic Console でキーと組織の設定を確かめてください。',
    };
  if (status === 404)
    return {
      cause: 'model_unknown',
      en:
        `The Anthropic API does not know the model ${model} (${what}): check ANTHROPIC_MODEL, and ` +
        'ANTHROPIC_BASE_URL if it is set.',
      ja:
        `Anthropic API にモデル ${model} がありません: .env のモデル名を確かめてください` +
        '（接続先の URL を変えているなら、それも）。',
    };
  return null;
}

type Failure = { message?: string; code?: string; proxy?: string; proxyStatus?: number; cause?: unknown };

/** An error and what it wraps (the SDK puts the fetch error in `cause`), as plain objects (any realm). */
function chain(err: unknown): Failure[] {
  const out: Failure[] = [];
  let e = err;
  for (let i = 0; i < 5 && e !== null && typeof e === 'object'; i++) {
    out.push(e as Failure);
    e = (e as Failure).cause;
  }
  return out;
}

const CODES = /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|ECONNABORTED)\b/;

/** node's error code, or the one its message names ("connect ECONNREFUSED …") when a wrapper dropped `code`. */
const codeOf = (errors: Failure[]): string => {
  const withCode = errors.find((e) => typeof e.code === 'string');
  if (withCode) return withCode.code!;
  for (const e of errors) {
    const m = CODES.exec(String(e.message ?? ''));
    if (m) return m[1]!;
  }
  return '';
};

const CERT = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ERR_TLS/;
const PROXY_FIX_EN = 'set HTTPS_PROXY if this network reaches the internet through a proxy';
const PROXY_FIX_JA = 'プロキシ経由でインターネットに出るネットワークなら .env にプロキシを設定してください';

/**
 * The problem a failed connection to `target` (host:port of the API) says, from node's error code: the proxy's
 * (marked by core/outbound-http.ts), a certificate, DNS, refused, unreachable or no answer. Null for a connection
 * that broke halfway (a reset): that is a busy moment, not a setup problem.
 */
export function connectionProblem(err: unknown, target: string): LlmProblem | null {
  const errors = chain(err);
  const code = codeOf(errors);
  const proxy = errors.find((e) => typeof e.proxy === 'string')?.proxy;
  const host = target.replace(/:\d+$/, '');
  if (proxy) {
    const status = errors.find((e) => typeof e.proxyStatus === 'number')?.proxyStatus;
    if (status === 407)
      return {
        cause: 'proxy',
        en:
          `The proxy ${proxy} asks for a user name and password (407): put them in HTTPS_PROXY as ` +
          `http://user:password@${proxy}.`,
        ja: `プロキシ ${proxy} が認証を求めています: .env のプロキシの設定を http://ユーザー名:パスワード@${proxy} の形にしてください。`,
      };
    if (status !== undefined)
      return {
        cause: 'proxy',
        en:
          `The proxy ${proxy} refused the connection to ${target} (${status}): ask the network administrator to ` +
          'allow it.',
        ja: `プロキシ ${proxy} が ${target} への接続を断りました: ネットワーク管理者に許可を依頼してください。`,
      };
    if (!CERT.test(code))
      return {
        cause: 'proxy',
        en: `The proxy ${proxy} in HTTPS_PROXY does not answer (${code || 'no answer'}): check HTTPS_PROXY.`,
        ja: `プロキシ ${proxy} に接続できません: .env のプロキシの設定を確かめてください。`,
      };
  }
  if (CERT.test(code))
    return {
      cause: 'tls',
      en:
        `The TLS certificate of ${host} is not trusted (${code}): a proxy that inspects HTTPS needs its CA ` +
        'certificate in NODE_EXTRA_CA_CERTS.',
      ja:
        `${host} の証明書を信頼できません: HTTPS を検査するプロキシを通っているなら、その CA 証明書を Node.js に渡してください` +
        '（日本語ガイドの「プロキシ」の節）。',
    };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return {
      cause: 'no_route',
      en: `The host name ${host} could not be looked up (${code}): check the network's DNS, or ${PROXY_FIX_EN}.`,
      ja: `${host} の名前を引けません（DNS で見つかりません）: DNS を確かめるか、${PROXY_FIX_JA}。`,
    };
  if (code === 'ECONNREFUSED')
    return {
      cause: 'no_route',
      en: `The connection to ${target} was refused (${code}): check the firewall, or ${PROXY_FIX_EN}.`,
      ja: `${target} への接続が拒否されました: ファイアウォールを確かめるか、${PROXY_FIX_JA}。`,
    };
  if (['ETIMEDOUT', 'ENETUNREACH', 'EHOSTUNREACH', 'ECONNABORTED'].includes(code)) return unreachable(target, code);
  return null;
}

/** No answer from `target` (a firewall that drops, no route): `why` is the code or the wait (`whyJa` in words). */
export function unreachable(target: string, why: string, whyJa = '応答がありません'): LlmProblem {
  return {
    cause: 'no_route',
    en: `${target} cannot be reached (${why}): check the firewall, or ${PROXY_FIX_EN}.`,
    ja: `${target} に届きません（${whyJa}）: ファイアウォールを確かめるか、${PROXY_FIX_JA}。`,
  };
}
