import type { NextFunction, Request, Response } from 'express';

/** Host names every local surface answers to (any port). */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** `example.com:3000` → `example.com`; `[::1]:3000` → `[::1]`; lower-cased. */
export function hostName(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  return h.split(':')[0] ?? '';
}

function isLoopbackAddress(ip: string): boolean {
  return ip === '127.0.0.1' || ip === '::1' || ip === '::ffff:127.0.0.1';
}

/** State-changing methods (they need a matching Origin). */
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface RequestGuardOptions {
  /** Host names accepted besides localhost / 127.0.0.1 / [::1]. */
  allowedHosts: readonly string[];
  /** Accept connections from other machines (otherwise loopback sockets only). */
  allowRemote: boolean;
  /** Which surface (for the 403 text). */
  surface: string;
  /** Skip the Host allow-list (surfaces protected by a token, e.g. /admin behind a proxy); Origin still applies. */
  anyHost?: boolean;
}

/**
 * DNS-rebinding and cross-site protection for a browser surface (issue 8 §4): the socket must be loopback
 * unless remote mode is on; the `Host` must be a loopback name or a configured one; and a state-changing
 * request must carry an `Origin` equal to `http(s)://<that Host>`. Anything else is 403 with nothing done.
 */
export function requestGuard(o: RequestGuardOptions) {
  const allowed = new Set([...LOOPBACK_HOSTS, ...o.allowedHosts.map((h) => h.trim().toLowerCase()).filter(Boolean)]);
  return (req: Request, res: Response, next: NextFunction) => {
    const refuse = (why: string) => res.status(403).type('text/plain').send(`${o.surface}: ${why}`);
    if (!o.allowRemote && !isLoopbackAddress(req.socket.remoteAddress ?? '')) {
      return void refuse(
        'available from this machine only (CONSOLE_ALLOW_REMOTE=true changes that; it then needs ADMIN_TOKEN)',
      );
    }
    const host = req.headers.host ?? '';
    if (!o.anyHost && !allowed.has(hostName(host)))
      return void refuse('unknown Host (add it to CONSOLE_ALLOWED_HOSTS if it is yours)');
    if (UNSAFE.has(req.method)) {
      const origin = req.headers.origin;
      if (origin !== `http://${host.toLowerCase()}` && origin !== `https://${host.toLowerCase()}`)
        return void refuse('cross-origin request refused');
    }
    next();
  };
}
