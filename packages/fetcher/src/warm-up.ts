import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createFetcher } from './create-fetcher.js';
import type { FetcherOptions } from './fetcher-options.js';

/** A name no resolver answers: the warm-up's own resolver maps it to its own server. */
const WARM_UP_HOST = 'fetcher-warm-up.invalid';
const WARM_UP_BODY = gzipSync('<!doctype html><html><head><title>warm-up</title></head><body><a href="/">home</a></body></html>');

/**
 * Runs one request through a fetcher built with `options` (a redirect, then a
 * gzip page) against a server of its own on loopback, and closes both.
 *
 * Why: a process's first request spends tens of milliseconds in code that has
 * not run yet (got's option handling, hooks, the guarded lookup, agents, the
 * socket), and three workers starting at once on a small machine make that
 * worse. A request the politeness gate admitted for a slot then reaches the
 * server that much late, while the group's next starts keep their slots, and
 * the server sees them closer together than the pace. Run before the first
 * admitted request, the same code is warm (the first request then leaves in a
 * few milliseconds, as every later one does).
 *
 * Nothing of it leaves the process: the resolver, the address policy and the
 * server are the warm-up's own, and no hooks of the caller run. Never throws
 * (a failed warm-up only leaves the code cold); resolves to whether the page
 * came back.
 */
export async function warmUpFetcher(options: FetcherOptions = {}, timeoutMs = 2_000): Promise<boolean> {
  const server = createServer((request, response) => {
    if (request.url === '/start') {
      response.writeHead(302, { location: '/page', 'content-length': '0' }).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip', 'content-length': String(WARM_UP_BODY.length) }).end(WARM_UP_BODY);
  });
  const fetcher = createFetcher({
    ...options,
    // The caller's address policy, resolver and pool keys stay out of it: only
    // the warm-up's own server is reachable, through the same guarded code path.
    allowPrivateNetwork: false,
    isAddressAllowed: (address) => address === '127.0.0.1',
    resolve: () => Promise.resolve(['127.0.0.1']),
    connectionKey: () => undefined,
    retry: { ...options.retry, limit: 0 },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const page = await fetcher.fetch(`http://${WARM_UP_HOST}:${port}/start`, {
      signal: AbortSignal.timeout(timeoutMs),
      attemptHooks: { onRequestSent: () => undefined, onResponseHead: () => undefined },
    });
    return page.status === 200 && page.redirects.length === 1;
  } catch {
    // Cold code is slower, not wrong.
    return false;
  } finally {
    fetcher.close();
    server.closeAllConnections();
    server.close();
  }
}
