import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSeededRandom, mixSeed } from './seeded-random.js';

/** How often a class of pages changes: a Poisson process with this mean gap (ms), or never. */
export interface ChangeClass {
  /** Share of the pages in this class (the shares add up to 1). */
  readonly share: number;
  /** Mean time between changes (ms); undefined: never changes. */
  readonly meanMs: number | undefined;
}

export interface ChangingSiteOptions {
  readonly pages: number;
  readonly seed: number;
  /** @default 60% never, 30% every 30 s, 10% every 5 s on average */
  readonly classes?: readonly ChangeClass[];
  /** How long change times are drawn for (ms from start). @default 1 hour */
  readonly horizonMs?: number;
  /** Body bytes of a page (padding included). @default 4096 */
  readonly pageBytes?: number;
  /** Loopback address to listen on. @default 127.0.0.1 */
  readonly host?: string;
}

/** One request as the server saw it. */
export interface ChangingRequest {
  /** Server time the request arrived (ms since epoch). */
  readonly at: number;
  readonly path: string;
  /** Page index, or -1 for the index page and anything else. */
  readonly page: number;
  readonly status: number;
  readonly bodyBytes: number;
  readonly conditional: boolean;
  /** The version served (or confirmed by a 304). */
  readonly version: number;
}

/** Which validator a page serves. */
export type ValidatorKind = 'etag' | 'last-modified' | 'none';

export interface ChangingPage {
  readonly index: number;
  readonly path: string;
  readonly meanMs: number | undefined;
  readonly validator: ValidatorKind;
  /** Times (ms since the site started) at which the page changes: version n holds from changes[n-1]. */
  readonly changes: readonly number[];
}

export interface ChangingSite {
  readonly origin: string;
  readonly startedAt: number;
  readonly pages: readonly ChangingPage[];
  /** Every request so far, in arrival order. */
  readonly requests: readonly ChangingRequest[];
  /** The version of a page at a time (ms since epoch). */
  versionAt(page: number, at: number): number;
  close(): Promise<void>;
}

const DEFAULT_CLASSES: readonly ChangeClass[] = [
  { share: 0.6, meanMs: undefined },
  { share: 0.3, meanMs: 30_000 },
  { share: 0.1, meanMs: 5_000 },
];

/**
 * A loopback site whose pages change at random, for continuous crawls: each
 * page's changes are a seeded Poisson process drawn up front (the truth of
 * its version at any time), a third of the pages answer conditional requests
 * by ETag, a third by Last-Modified, a third not at all; every page carries a
 * clock (`<span class="clock">`) that differs on every response, which a
 * content signature must ignore. The index page `/` links to every page and
 * never changes. Every request is recorded with the server's time.
 */
export async function startChangingSite(options: ChangingSiteOptions): Promise<ChangingSite> {
  const classes = options.classes ?? DEFAULT_CLASSES;
  const horizonMs = options.horizonMs ?? 3_600_000;
  const pageBytes = options.pageBytes ?? 4_096;
  const pick = createSeededRandom(mixSeed([options.seed, 1]));
  const pages: ChangingPage[] = [];
  for (let index = 0; index < options.pages; index += 1) {
    let draw = pick();
    let meanMs: number | undefined;
    for (const changeClass of classes) {
      meanMs = changeClass.meanMs;
      draw -= changeClass.share;
      if (draw < 0) break;
    }
    const random = createSeededRandom(mixSeed([options.seed, 2, index]));
    const changes: number[] = [];
    if (meanMs !== undefined) {
      for (let at = -Math.log(1 - random()) * meanMs; at < horizonMs; at += -Math.log(1 - random()) * meanMs) changes.push(at);
    }
    const validator: ValidatorKind = (['etag', 'last-modified', 'none'] as const)[index % 3] ?? 'none';
    pages.push({ index, path: `/p/${index}`, meanMs, validator, changes });
  }
  const requests: ChangingRequest[] = [];
  const startedAt = Date.now();
  const versionAt = (page: number, at: number): number => {
    const changes = pages[page]?.changes ?? [];
    const since = at - startedAt;
    let low = 0;
    let high = changes.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if ((changes[mid] ?? Infinity) <= since) low = mid + 1;
      else high = mid;
    }
    return low;
  };
  const indexBody = `<!doctype html><html><head><title>index</title></head><body>${pages.map((page) => `<a href="${page.path}">${page.index}</a>`).join(' ')}</body></html>`;

  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    const at = Date.now();
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const conditional = request.headers['if-none-match'] !== undefined || request.headers['if-modified-since'] !== undefined;
    const match = /^\/p\/(\d+)$/.exec(path);
    const page = match ? pages[Number(match[1])] : undefined;
    const send = (status: number, headers: Record<string, string>, served: { body: string; version: number; index: number }) => {
      const { body, version, index } = served;
      const bytes = Buffer.from(body);
      response.writeHead(status, { ...headers, ...(status === 304 ? {} : { 'content-type': 'text/html; charset=utf-8', 'content-length': String(bytes.length) }) });
      response.end(status === 304 ? undefined : bytes);
      requests.push({ at, path, page: index, status, bodyBytes: status === 304 ? 0 : bytes.length, conditional, version });
    };
    if (path === '/robots.txt') return send(404, {}, { body: 'no robots', version: 0, index: -1 });
    if (path === '/') return send(200, {}, { body: indexBody, version: 0, index: -1 });
    if (!page) return send(404, {}, { body: 'not found', version: 0, index: -1 });
    const version = versionAt(page.index, at);
    const changedAt = startedAt + (page.changes[version - 1] ?? 0);
    const etag = `"v${version}"`;
    const lastModified = new Date(Math.floor(changedAt / 1000) * 1000).toUTCString();
    const headers: Record<string, string> = page.validator === 'etag' ? { etag } : page.validator === 'last-modified' ? { 'last-modified': lastModified } : {};
    if (page.validator === 'etag' && request.headers['if-none-match'] === etag) return send(304, headers, { body: '', version, index: page.index });
    const since = Date.parse(request.headers['if-modified-since'] ?? '');
    if (page.validator === 'last-modified' && !Number.isNaN(since) && Math.floor(changedAt / 1000) * 1000 <= since) return send(304, headers, { body: '', version, index: page.index });
    const text = `<!doctype html><html><head><title>page ${page.index}</title></head><body><h1>page ${page.index} version ${version}</h1><span class="clock">${at}</span><a href="/">home</a>`;
    const padding = '<p>' + 'lorem ipsum '.repeat(Math.max(0, Math.ceil((pageBytes - text.length) / 12))) + '</p>';
    send(200, headers, { body: `${text}${padding}</body></html>`, version, index: page.index });
  };

  const server = createServer(handle);
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port, address } = server.address() as AddressInfo;
  return {
    origin: `http://${address}:${port}`,
    startedAt,
    pages,
    requests,
    versionAt,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Freshness and cost of a continuous crawl of a changing site, from its request log and its truth. */
export interface FreshnessReport {
  /** Time-averaged share of pages whose last fetched version was the live one, over [from, to]. */
  readonly freshness: number;
  readonly staleness: number;
  /** Page requests in [from, to] (the index excluded). */
  readonly requests: number;
  readonly bodyBytes: number;
  readonly notModified: number;
}

/**
 * Time-averaged freshness over [from, to]: a page is fresh from each fetch
 * until its next change (Cho and Garcia-Molina's freshness), stale before
 * its first fetch. Sampled every `stepMs`.
 */
export function measureFreshness(site: ChangingSite, window: { readonly from: number; readonly to: number; readonly stepMs?: number }): FreshnessReport {
  const step = window.stepMs ?? 100;
  const fetchesByPage = new Map<number, ChangingRequest[]>();
  for (const request of site.requests) {
    if (request.page < 0 || request.status >= 400) continue;
    const list = fetchesByPage.get(request.page) ?? [];
    list.push(request);
    fetchesByPage.set(request.page, list);
  }
  let freshSum = 0;
  let samples = 0;
  for (const page of site.pages) {
    const fetches = fetchesByPage.get(page.index) ?? [];
    let next = 0;
    let held: number | undefined;
    for (let at = window.from; at <= window.to; at += step) {
      while (next < fetches.length && (fetches[next]?.at ?? Infinity) <= at) {
        held = fetches[next]?.version;
        next += 1;
      }
      if (held !== undefined && held === site.versionAt(page.index, at)) freshSum += 1;
      samples += 1;
    }
  }
  const inWindow = site.requests.filter((request) => request.page >= 0 && request.at >= window.from && request.at <= window.to);
  const freshness = samples === 0 ? 0 : freshSum / samples;
  return {
    freshness,
    staleness: 1 - freshness,
    requests: inWindow.length,
    bodyBytes: inWindow.reduce((sum, request) => sum + request.bodyBytes, 0),
    notModified: inWindow.filter((request) => request.status === 304).length,
  };
}
