import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { Readable, type Duplex } from 'node:stream';
import tls from 'node:tls';

/**
 * Every outbound HTTP request of the process goes through here: the model API, ChatWork, Discord's REST API (and
 * later MCP over HTTP). Two things in one place:
 *
 * - Keep-alive agents: a request reuses an open connection instead of a TLS/TCP handshake each time. node:http
 *   also costs far less CPU per request than fetch (undici): issue 10 measured −16 % service CPU for the ChatWork
 *   posts and 0.5 ms less per model call (decision 0007).
 * - The company proxy (issue 41): `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` as curl reads them. An https target is
 *   reached through a CONNECT tunnel (TLS end to end, the proxy sees only the host name); an http target is asked
 *   of the proxy with the absolute URL. Loopback addresses never go through a proxy.
 *
 * An error on the way to or through a proxy carries `proxy` (its host:port, never its credentials), and a proxy that
 * refuses a tunnel fails with code `EPROXY` and `proxyStatus`, so that a failure can be told as the proxy's.
 */

/** The proxies, from the configuration (`useProxies` at start-up; none until then). */
export interface ProxySettings {
  httpsProxy?: string;
  httpProxy?: string;
  /** Comma-separated host names (a leading dot or none: the domain and its sub-domains), host:port, IPs, or `*`. */
  noProxy?: string;
}

interface Proxy {
  url: URL;
  /** host:port, for messages (never the credentials). */
  label: string;
  authorization: string | null;
}

let proxies: { https: Proxy | null; http: Proxy | null; noProxy: string[] } = { https: null, http: null, noProxy: [] };
const tunnelAgents = new Map<string, https.Agent>();
const forwardAgents = new Map<string, http.Agent>();

function proxyOf(raw: string | undefined): Proxy | null {
  if (!raw) return null;
  const url = new URL(/^[a-z]+:\/\//i.test(raw) ? raw : `http://${raw}`);
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const user = decodeURIComponent(url.username);
  const authorization = user
    ? `Basic ${Buffer.from(`${user}:${decodeURIComponent(url.password)}`).toString('base64')}`
    : null;
  return { url, label: `${url.hostname}:${port}`, authorization };
}

/** Sets the proxies for every later request of the process (called once at start-up from the configuration). */
export function useProxies(s: ProxySettings): void {
  proxies = {
    https: proxyOf(s.httpsProxy),
    http: proxyOf(s.httpProxy),
    noProxy: (s.noProxy ?? '')
      .split(',')
      .map((x) => x.trim().toLowerCase())
      .filter(Boolean),
  };
  tunnelAgents.clear();
  forwardAgents.clear();
}

/** The proxy in use for requests of a protocol, as host:port (for the start-up log and /admin), or null. */
export function proxyLabel(protocol: 'https:' | 'http:'): string | null {
  return (protocol === 'https:' ? proxies.https : proxies.http)?.label ?? null;
}

const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[?::1\]?)$/i;

/** The proxy for a URL, or null when it goes direct (no proxy set, loopback, or listed in NO_PROXY). */
export function proxyFor(u: URL): Proxy | null {
  const proxy = u.protocol === 'https:' ? proxies.https : proxies.http;
  if (!proxy) return null;
  const host = u.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (LOOPBACK.test(host)) return null;
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  for (const entry of proxies.noProxy) {
    if (entry === '*') return null;
    const [name, onlyPort] = entry.replace(/^\*?\./, '.').split(/:(?=\d+$)/) as [string, string | undefined];
    if (onlyPort && onlyPort !== port) continue;
    const bare = name.replace(/^\./, '');
    if (host === bare || host.endsWith(`.${bare}`)) return null;
  }
  return proxy;
}

const direct = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 32 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 32 }),
};

/** An error on the way to a proxy, marked as the proxy's. */
const viaProxy = (err: Error, proxy: Proxy) => Object.assign(err, { proxy: proxy.label });

/**
 * An https agent whose connections are CONNECT tunnels through a proxy: TLS to the target runs inside the tunnel,
 * so certificates are checked against the target as on a direct connection. Kept alive and pooled per target like
 * the direct agent.
 */
class TunnelAgent extends https.Agent {
  constructor(private readonly proxy: Proxy) {
    super({ keepAlive: true, maxSockets: 32 });
  }

  override createConnection(
    req: http.RequestOptions,
    done?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    const options = req as tls.ConnectionOptions & { host?: string; port?: number | string; servername?: string };
    const target = `${options.host}:${options.port ?? 443}`;
    const proxy = this.proxy;
    const purl = proxy.url;
    const port = Number(purl.port || (purl.protocol === 'https:' ? 443 : 80));
    const toProxy =
      purl.protocol === 'https:'
        ? tls.connect({ host: purl.hostname, port, servername: purl.hostname })
        : net.connect({ host: purl.hostname, port });
    let finished = false;
    const finish = (err: Error | null, socket?: Duplex) => {
      if (finished) return;
      finished = true;
      if (err) toProxy.destroy();
      done?.(err, socket as Duplex);
    };
    toProxy.once('error', (err) => finish(viaProxy(err, proxy)));
    toProxy.once(purl.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
      const auth = proxy.authorization ? `Proxy-Authorization: ${proxy.authorization}\r\n` : '';
      toProxy.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`);
    });
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > 16384) finish(viaProxy(new Error('the proxy sent an overlong answer to CONNECT'), proxy));
        return;
      }
      toProxy.off('data', onData);
      const status = /^HTTP\/1\.[01] (\d{3})\s*(.*)/.exec(head.subarray(0, end).toString('latin1').split('\r\n')[0]!);
      const code = Number(status?.[1] ?? 0);
      if (code !== 200) {
        const err = new Error(`the proxy ${proxy.label} answered ${code} ${status?.[2] ?? ''} to CONNECT ${target}`);
        return finish(Object.assign(viaProxy(err, proxy), { code: 'EPROXY', proxyStatus: code }));
      }
      toProxy.pause();
      const secure = tls.connect({ ...options, socket: toProxy, servername: options.servername ?? options.host });
      secure.once('error', (err) => finish(err));
      secure.once('secureConnect', () => finish(null, secure));
    };
    toProxy.on('data', onData);
    return undefined;
  }
}

/**
 * One outbound request (node:http's ClientRequest: the caller writes the body and reads the answer): direct on the
 * keep-alive agents, or through the configured proxy.
 */
export function outboundRequest(
  u: URL,
  o: { method: string; headers: Record<string, string>; signal?: AbortSignal },
): http.ClientRequest {
  const proxy = proxyFor(u);
  if (!proxy) {
    const lib = u.protocol === 'https:' ? https : http;
    return lib.request(u, {
      method: o.method,
      headers: o.headers,
      agent: direct[u.protocol === 'https:' ? 'https:' : 'http:'],
      signal: o.signal,
    });
  }
  if (u.protocol === 'https:') {
    let agent = tunnelAgents.get(proxy.label);
    if (!agent) tunnelAgents.set(proxy.label, (agent = new TunnelAgent(proxy)));
    return https.request(u, { method: o.method, headers: o.headers, agent, signal: o.signal });
  }
  // An http target: the proxy is asked for the absolute URL (a forward proxy's own protocol).
  let agent = forwardAgents.get(proxy.label);
  if (!agent) forwardAgents.set(proxy.label, (agent = new http.Agent({ keepAlive: true, maxSockets: 32 })));
  const lib = proxy.url.protocol === 'https:' ? https : http;
  const headers = {
    ...o.headers,
    host: u.host,
    ...(proxy.authorization ? { 'proxy-authorization': proxy.authorization } : {}),
  };
  const req = lib.request({
    protocol: proxy.url.protocol,
    host: proxy.url.hostname,
    port: proxy.url.port || (proxy.url.protocol === 'https:' ? 443 : 80),
    path: u.href,
    method: o.method,
    headers,
    agent: proxy.url.protocol === 'https:' ? undefined : agent,
    signal: o.signal,
  });
  // Registered first: a connection error is marked as the proxy's before the caller's listener sees it.
  req.on('error', (err) => viaProxy(err, proxy));
  return req;
}

/** node:http's header object as a fetch `Headers` (repeated headers appended). */
export function toHeaders(raw: http.IncomingHttpHeaders): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) h.append(k, one);
  }
  return h;
}

/** Statuses whose answer has no body (a `Response` refuses one). */
const NULL_BODY = new Set([204, 205, 304]);

const abortError = (): Error => Object.assign(new Error('the request was aborted (timeout)'), { name: 'AbortError' });

/**
 * A `fetch` over {@link outboundRequest}, for libraries that take one (the Anthropic SDK, discord.js's REST
 * client). A JSON answer is read whole before it is returned, so the caller's timeout (its abort signal) covers the
 * body too; an event stream is handed over as it arrives. An abort rejects with an `AbortError`; a broken
 * connection rejects with node's error (its `code`, and `proxy` when it broke on the way to the proxy).
 */
export async function outboundFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const u = new URL(input instanceof Request ? input.url : input);
  let body: Buffer | undefined;
  const headers = Object.fromEntries(new Headers(init.headers));
  if (typeof init.body === 'string') body = Buffer.from(init.body, 'utf8');
  else if (init.body != null) {
    // Form data, bytes, a blob: as fetch would encode them (with the multipart boundary header).
    const encoded = new Request(u, { method: init.method ?? 'POST', body: init.body, headers: init.headers });
    body = Buffer.from(await encoded.arrayBuffer());
    const type = encoded.headers.get('content-type');
    if (type) headers['content-type'] = type;
  }
  if (body) headers['content-length'] = String(body.length);
  const signal = init.signal ?? undefined;
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => reject(signal?.aborted ? abortError() : err);
    const req = outboundRequest(u, { method: init.method ?? 'GET', headers, signal });
    req.on('error', fail);
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const answer = { status, statusText: res.statusMessage ?? '', headers: toHeaders(res.headers) };
      // A `Response` refuses statuses outside 200–599 (a broken proxy's 600): an error, never a throw here.
      const respond = (b: ConstructorParameters<typeof Response>[0]) => {
        try {
          resolve(new Response(b, answer));
        } catch (err) {
          res.destroy();
          fail(err as Error);
        }
      };
      if (NULL_BODY.has(status)) {
        res.resume();
        return respond(null);
      }
      if ((res.headers['content-type'] ?? '').startsWith('text/event-stream'))
        return respond(Readable.toWeb(res) as ReadableStream<Uint8Array>);
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => respond(Buffer.concat(chunks)));
      res.on('error', fail);
      res.on('aborted', () => fail(new Error('the connection closed before the answer was complete')));
    });
    req.end(body);
  });
}
