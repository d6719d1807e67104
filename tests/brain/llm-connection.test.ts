import { connectionProblem, statusProblem } from '../../src/brain/llm-connection';

/** A node error as a failed connection produces it, wrapped as the SDK wraps it (`cause`). */
const failed = (code: string, message = `connect ${code} 104.18.0.1:443`, extra: object = {}) => {
  const cause = Object.assign(new Error(message), { code, ...extra });
  return Object.assign(new Error('Connection error.'), { cause });
};
const target = 'api.anthropic.com:443';

/** Issue 41: each way the model can be out of reach is told as its own cause, with its fix. */
describe('why the model cannot be used', () => {
  it('the API refusing the key, the key permission, the model', () => {
    expect(statusProblem(401, 'authentication_error', 'claude-opus-5-5')!.en).toBe(
      'The Anthropic API rejected the key in ANTHROPIC_API_KEY (401 authentication_error): set a valid key in .env ' +
        'and restart.',
    );
    expect(statusProblem(403, 'permission_error', 'm')).toMatchObject({ cause: 'key_rejected' });
    expect(statusProblem(404, 'not_found_error', 'claude-opus-9')).toMatchObject({
      cause: 'model_unknown',
      ja: expect.stringContaining('モデル claude-opus-9 がありません'),
    });
    // Busy is not a setup problem.
    for (const s of [429, 500, 529]) expect(statusProblem(s, 'overloaded_error', 'm')).toBeNull();
  });

  it('DNS, refused, no route; a reset connection is a busy moment, not a cause', () => {
    expect(connectionProblem(failed('ENOTFOUND', 'getaddrinfo ENOTFOUND api.anthropic.com'), target)!.en).toBe(
      "The host name api.anthropic.com could not be looked up (ENOTFOUND): check the network's DNS, or set " +
        'HTTPS_PROXY if this network reaches the internet through a proxy.',
    );
    expect(connectionProblem(failed('EAI_AGAIN'), target)).toMatchObject({ cause: 'no_route' });
    expect(connectionProblem(failed('ECONNREFUSED'), target)!.ja).toContain(
      'api.anthropic.com:443 への接続が拒否されました',
    );
    expect(connectionProblem(failed('ETIMEDOUT'), target)!.en).toMatch(/^api\.anthropic\.com:443 cannot be reached/);
    expect(connectionProblem(failed('ECONNRESET'), target)).toBeNull();
    // A wrapper that dropped `code` (a test interceptor): the message still says it.
    const bare = { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') };
    expect(connectionProblem(bare, '127.0.0.1:9')).toMatchObject({ cause: 'no_route' });
  });

  it('a certificate the machine does not trust (a proxy that inspects HTTPS)', () => {
    const p = connectionProblem(
      failed('SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain'),
      target,
    )!;
    expect(p.cause).toBe('tls');
    expect(p.en).toContain('NODE_EXTRA_CA_CERTS');
    expect(p.ja).not.toMatch(/[A-Z]_[A-Z_]+/);
  });

  it('the proxy: not answering, wanting a password, refusing the host', () => {
    expect(
      connectionProblem(
        failed('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.1:8080', { proxy: '10.0.0.1:8080' }),
        target,
      ),
    ).toMatchObject({
      cause: 'proxy',
      en: 'The proxy 10.0.0.1:8080 in HTTPS_PROXY does not answer (ECONNREFUSED): check HTTPS_PROXY.',
    });
    const wants = failed('EPROXY', 'the proxy answered 407', { proxy: 'p:3128', proxyStatus: 407 });
    expect(connectionProblem(wants, target)!.en).toContain('asks for a user name and password (407)');
    const refuses = failed('EPROXY', 'the proxy answered 403', { proxy: 'p:3128', proxyStatus: 403 });
    expect(connectionProblem(refuses, target)!.ja).toBe(
      'プロキシ p:3128 が api.anthropic.com:443 への接続を断りました: ネットワーク管理者に許可を依頼してください。',
    );
  });
});
