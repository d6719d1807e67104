import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Logger } from '../observability/logger';

/** The session cookie of /admin and of the remote console (HttpOnly, SameSite=Strict). */
export const SESSION_COOKIE = 'hisho_admin';

export interface AdminAuthOptions {
  /** ADMIN_TOKEN (≥ 16 characters); undefined = nothing can log in. */
  token: string | undefined;
  logger: Logger;
  /** Session lifetime (default 12 h). */
  sessionMs?: number;
  /** Failed token attempts allowed per client address per window (default 5 per 15 min). */
  maxFailures?: number;
  failureWindowMs?: number;
  now?: () => number;
}

/** Constant-time comparison of two secrets of any length (SHA-256 digests compared with timingSafeEqual). */
export function sameSecret(candidate: string, secret: string): boolean {
  const a = createHash('sha256').update(candidate, 'utf8').digest();
  const b = createHash('sha256').update(secret, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** Cookies of a request (no dependency: one header, `name=value; …`). */
export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return decodeURIComponent(part.slice(i + 1).trim());
  }
  return undefined;
}

/**
 * The one admin-token module (R-O4, issue 8 §4): `Authorization: Bearer <ADMIN_TOKEN>` for APIs, a
 * login page that sets a signed session cookie for browsers, constant-time token checks, and a limit on
 * failed attempts per client address (nothing is revealed: a wrong token and a missing one look alike).
 * Sessions are stateless HMAC-signed expiry stamps keyed by the token, so every instance accepts them and
 * changing ADMIN_TOKEN ends them all.
 */
export class AdminAuth {
  private readonly key: Buffer | null;
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly o: AdminAuthOptions) {
    this.key = o.token ? createHash('sha256').update(`hisho-admin-session\0${o.token}`).digest() : null;
  }

  get configured(): boolean {
    return this.key !== null;
  }

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  /** A fresh session cookie value: `<expiresMs>.<nonce>.<signature>`. */
  issueSession(): string {
    const body = `${this.now() + (this.o.sessionMs ?? 12 * 3_600_000)}.${randomBytes(12).toString('base64url')}`;
    return `${body}.${this.sign(body)}`;
  }

  verifySession(value: string | undefined): boolean {
    if (!this.key || !value) return false;
    const i = value.lastIndexOf('.');
    if (i <= 0) return false;
    const body = value.slice(0, i);
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(value.slice(i + 1));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
    return Number(body.split('.')[0]) > this.now();
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key ?? Buffer.alloc(32))
      .update(body)
      .digest('base64url');
  }

  /** True for the configured token (constant time); false when none is configured. */
  checkToken(candidate: string | undefined): boolean {
    if (!this.o.token || typeof candidate !== 'string') return false;
    return sameSecret(candidate, this.o.token);
  }

  /** Whether the request carries a valid Bearer token or session cookie. */
  authenticated(req: Request): boolean {
    const auth = req.headers.authorization;
    if (typeof auth === 'string' && /^Bearer /i.test(auth)) return this.checkToken(auth.slice(7).trim());
    return this.verifySession(readCookie(req, SESSION_COOKIE));
  }

  /** Seconds until the client may try again, or 0 when it is not limited. */
  limitedFor(client: string): number {
    const windowMs = this.o.failureWindowMs ?? 15 * 60_000;
    const recent = (this.failures.get(client) ?? []).filter((t) => t > this.now() - windowMs);
    this.failures.set(client, recent);
    if (recent.length < (this.o.maxFailures ?? 5)) return 0;
    return Math.max(1, Math.ceil((recent[0]! + windowMs - this.now()) / 1000));
  }

  private fail(client: string, where: string): void {
    const list = this.failures.get(client) ?? [];
    list.push(this.now());
    this.failures.set(client, list);
    if (this.failures.size > 10_000) this.failures.clear();
    this.o.logger.warn({ client, where, failures: list.length }, 'admin authentication failed');
  }

  /** Answers 429 (with Retry-After) when the client is over its failure budget; true when it did. */
  private refuseLimited(client: string, res: Response, body: () => string): boolean {
    const wait = this.limitedFor(client);
    if (wait === 0) return false;
    const text = body();
    res
      .status(429)
      .set('retry-after', String(wait))
      .type(text.startsWith('<') ? 'html' : 'text/plain')
      .send(text);
    return true;
  }

  /**
   * Guards a route. `api`: 401 JSON (or 429 when limited). `page`: a browser is sent to the login page,
   * which comes back to the page it asked for.
   */
  require(kind: 'api' | 'page') {
    return (req: Request, res: Response, next: NextFunction) => {
      const client = req.socket.remoteAddress ?? 'unknown';
      if (this.refuseLimited(client, res, () => 'too many failed attempts; try again later')) return;
      if (this.authenticated(req)) return next();
      if (req.headers.authorization !== undefined) this.fail(client, req.path);
      if (kind === 'api')
        return void res.status(401).set('www-authenticate', 'Bearer').json({ error: 'authentication required' });
      res.redirect(303, `/admin/login?next=${encodeURIComponent(req.originalUrl)}`);
    };
  }

  /** `POST /admin/login` (form `token`, `next`) and `POST /admin/logout`; the caller serves the login page. */
  routes(loginPage: (error: string | null, next: string) => string): Router {
    const r = express.Router();
    r.post('/admin/login', express.urlencoded({ extended: false, limit: '4kb' }), (req, res) => {
      const client = req.socket.remoteAddress ?? 'unknown';
      const again = () =>
        loginPage('試行回数が多すぎます。しばらくしてからもう一度お試しください。', String(req.body?.next ?? ''));
      if (this.refuseLimited(client, res, again)) return;
      const token = typeof req.body?.token === 'string' ? req.body.token : '';
      if (!this.checkToken(token)) {
        this.fail(client, 'login');
        return void res
          .status(401)
          .type('html')
          .send(loginPage('トークンが正しくありません。もう一度入力してください。', String(req.body?.next ?? '')));
      }
      res.cookie(SESSION_COOKIE, this.issueSession(), {
        httpOnly: true,
        sameSite: 'strict',
        path: '/',
        maxAge: this.o.sessionMs ?? 12 * 3_600_000,
      });
      res.redirect(303, safeNext(req.body?.next));
    });
    r.post('/admin/logout', (_req, res) => {
      res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', path: '/' });
      res.redirect(303, '/admin/login');
    });
    return r;
  }
}

/** Only our own pages are valid places to return to after login (no open redirect). */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(admin|console)(\/[\w\-./?=&%]*)?$/.test(next) && !next.startsWith('//')
    ? next
    : '/admin';
}
