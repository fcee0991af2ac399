import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';

/** Basic-auth credentials the dashboard requires on every route. */
export interface DashboardAuth {
  readonly user: string;
  readonly password: string;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * Requires HTTP basic auth on every request. Compares SHA-256 digests with
 * `timingSafeEqual`, so neither the content nor the length of the
 * credentials leaks through response times.
 */
export function basicAuth(auth: DashboardAuth): RequestHandler {
  const expectedUser = digest(auth.user);
  const expectedPassword = digest(auth.password);
  return (req, res, next) => {
    const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.headers.authorization ?? '');
    const decoded = match?.[1] === undefined ? '' : Buffer.from(match[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const user = colon < 0 ? '' : decoded.slice(0, colon);
    const password = colon < 0 ? '' : decoded.slice(colon + 1);
    // Both compared every time (no short-circuit), so a right user name takes no longer than a wrong one.
    const userOk = timingSafeEqual(digest(user), expectedUser);
    const passwordOk = timingSafeEqual(digest(password), expectedPassword);
    if (colon >= 0 && userOk && passwordOk) {
      next();
      return;
    }
    res
      .status(401)
      .set('WWW-Authenticate', 'Basic realm="crawlq dashboard", charset="UTF-8"')
      .type('text/plain')
      .send('authentication required\n');
  };
}
