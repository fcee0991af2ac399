import type { Request, RequestHandler } from 'express';
import { isLoopbackHost } from './loopback.js';

/** The `host[:port]` a URL or Host header names, normalised; undefined when it does not parse. */
function normaliseHost(host: string): string | undefined {
  try {
    return new URL(`http://${host}`).host;
  } catch {
    return undefined;
  }
}

/**
 * Answers only requests whose Host header names this machine. Without auth
 * the dashboard trusts the browser on this machine; a DNS-rebinding page
 * (evil.example resolving to 127.0.0.1) would be "same origin" to it, but its
 * requests carry `Host: evil.example`.
 */
export function loopbackHostOnly(): RequestHandler {
  return (req, res, next) => {
    const host = normaliseHost(req.headers.host ?? '');
    const hostname = host === undefined ? undefined : new URL(`http://${host}`).hostname;
    if (hostname !== undefined && isLoopbackHost(hostname)) {
      next();
      return;
    }
    res.status(403).type('text/plain').send('forbidden: this dashboard only answers to a loopback Host\n');
  };
}

/** Whether a state-changing request comes from a page of this dashboard (or from a non-browser client). */
export function isSameOriginRequest(req: Request): boolean {
  // Sent by every current browser; `same-origin` is the only value a page of ours produces.
  const fetchSite = req.headers['sec-fetch-site'];
  if (typeof fetchSite === 'string') return fetchSite === 'same-origin';
  // Older browsers: Origin on every POST, `null` for opaque origins (sandboxed frames, some redirects).
  const origin = req.headers.origin;
  if (typeof origin === 'string') {
    const own = normaliseHost(req.headers.host ?? '');
    try {
      const parsed = new URL(origin);
      // https too: the dashboard may sit behind a TLS-terminating proxy that keeps the Host header.
      return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && own !== undefined && parsed.host === own;
    } catch {
      return false;
    }
  }
  // Neither header: not a browser (curl, scripts). Forms still need the CSRF token, the API a JSON body.
  return true;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Refuses state-changing requests (POST, PUT, DELETE, ...) sent by pages of
 * other sites, on every route including bull-board's API.
 */
export function sameOriginWrites(): RequestHandler {
  return (req, res, next) => {
    if (SAFE_METHODS.has(req.method) || isSameOriginRequest(req)) {
      next();
      return;
    }
    res.status(403).type('text/plain').send('forbidden: cross-site request refused\n');
  };
}
