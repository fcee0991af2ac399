import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '@crawlq/config';
import { stateKeyPrefix } from '@crawlq/redis';
import { startTestRedis, waitFor, type TestRedis } from '@crawlq/testing';
import { urlFingerprint } from '@crawlq/urls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CrawlServices, openCrawlServices, publishCrawlDefinition } from '@crawlq/crawl-control';
import { type CrawlWorker, startCrawlWorker } from '../../src/index.js';
import { defineCrawler } from '../../src/api.js';
import { inlineCrawler } from '../../src/handlers/load-crawler.js';
import type { Crawler } from '../../src/handlers/crawler-types.js';

// A user's crawler in a continuous crawl (--revisit): a real worker in-process,
// a real Redis and a loopback site with one page behind an ETag, one that
// changes on every request and one that never changes. Judged at the server
// (what it was asked, with which validators) and in the items written, and in
// Redis: a page retired after three 404s leaves no route and data behind.
const HOST = '127.0.0.94';

let redis: TestRedis;
let http: Server;
let origin: string;
const requests: { path: string; headers: IncomingHttpHeaders; status: number }[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  let served = 0;
  http = createServer((request, response) => {
    const path = request.url ?? '/';
    served += 1;
    let status = 200;
    let body: string;
    const headers: Record<string, string> = { 'content-type': 'text/html; charset=utf-8' };
    switch (path) {
      case '/':
        body = '<html><body><a href="/etag">e</a></body></html>';
        break;
      case '/etag':
        headers.etag = '"v1"';
        if (request.headers['if-none-match'] === '"v1"') status = 304;
        body = status === 304 ? '' : '<html><body><p>tagged content</p></body></html>';
        break;
      case '/changing':
        body = `<html><body><p>version ${served}</p></body></html>`;
        break;
      case '/vanishing':
        // There once, then gone for good: retired after its third 404 in a row.
        if (requests.some((earlier) => earlier.path === path)) status = 404;
        body = status === 404 ? 'gone' : '<html><body><p>here for now</p></body></html>';
        break;
      default:
        body = '<html><body><p>the same every time</p></body></html>';
    }
    requests.push({ path, headers: request.headers, status });
    response.writeHead(status, headers).end(body);
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(0, HOST, () => resolve());
  });
  origin = `http://${HOST}:${(http.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => http.close(() => resolve()));
  await redis.stop();
});

interface Item {
  readonly url: string;
  readonly label: string;
  readonly userData: unknown;
  readonly status: number;
}

describe("a crawler's pages in a continuous crawl", () => {
  it('are revisited with their route and data: a 304 or unchanged content runs no route, a changed page runs it again, a page gone three times is retired with its data', { timeout: 90_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-crawler-revisit-'));
    const config = loadConfig({
      flags: { namespace: `t-${randomUUID()}`, out: join(dir, 'out.jsonl'), stateDir: dir, allowPrivateNetwork: true, rate: 'none', revisit: '1s', backoff: '50ms' },
    });
    const crawler = inlineCrawler(
      defineCrawler({
        routes: {
          start: async ({ enqueue, push, request, response }) => {
            await push({ url: request.url, label: request.label, userData: request.userData, status: response.status });
            await enqueue(['/etag', '/changing', '/same', '/vanishing'], { label: 'tagged', userData: { from: 'start' } });
          },
          tagged: async ({ push, request, response }) => push({ url: request.url, label: request.label, userData: request.userData, status: response.status }),
        },
        defaultRoute: 'start',
      }) as unknown as Crawler,
    );
    let services: CrawlServices | undefined;
    let worker: CrawlWorker | undefined;
    const count = (path: string) => requests.filter((request) => request.path === path).length;
    try {
      services = await openCrawlServices(config, redis.url, { role: 'producer' });
      await publishCrawlDefinition(services, 'test');
      worker = await startCrawlWorker({ config, redisUrl: redis.url, cli: 'crawlq', log: () => undefined, crawler });
      await services.frontier.addSeeds([`${origin}/`]);
      const fetchedAll = () => ['/etag', '/changing', '/same'].every((path) => count(path) >= 3) && count('/vanishing') >= 4;
      await waitFor(fetchedAll, { what: 'each page revisited 3 times, and the vanishing one retired', timeoutMs: 60_000, intervalMs: 100 }).catch((error: unknown) => {
        throw new Error(`${String(error)}: ${JSON.stringify(requests.map((request) => request.path))}`);
      });
      // Two more revisits of the page that changes (a second or more): the retired page was not asked again meanwhile.
      const changingSoFar = count('/changing');
      await waitFor(() => count('/changing') >= changingSoFar + 2, { what: 'two more revisits', timeoutMs: 60_000, intervalMs: 100 });
      expect(count('/vanishing')).toBe(4);
      // Its route and data are gone from Redis; a page still on the schedule keeps its own.
      const metaKey = `${stateKeyPrefix(config.namespace)}:request-meta`;
      expect(await services.redis.hget(metaKey, urlFingerprint(`${origin}/vanishing`))).toBeNull();
      expect(await services.redis.hget(metaKey, urlFingerprint(`${origin}/changing`))).not.toBeNull();
      // A graceful stop: a page in hand is handled (its items written) before close returns.
      await worker.close(10_000);
      worker = undefined;
    } finally {
      await worker?.close(1_000);
      await services?.close();
    }
    const items = readFileSync(config.out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Item);
    const itemsOf = (path: string) => items.filter((item) => item.url === `${origin}${path}`);

    // Revisits of the ETag page asked conditionally, and the server said 304 each time.
    const etag = requests.filter((request) => request.path === '/etag');
    expect(etag[0]?.headers['if-none-match']).toBeUndefined();
    for (const revisit of etag.slice(1)) expect(revisit).toMatchObject({ headers: { 'if-none-match': '"v1"' }, status: 304 });
    // A 304 and an unchanged body ran no route: one item each, from the first fetch.
    expect(itemsOf('/etag')).toEqual([{ url: `${origin}/etag`, label: 'tagged', userData: { from: 'start' }, status: 200 }]);
    expect(itemsOf('/same')).toHaveLength(1);
    expect(itemsOf('/')).toHaveLength(1);
    // The page that changes ran its route on every fetch, with the route and data its link was enqueued with.
    expect(itemsOf('/changing')).toHaveLength(count('/changing'));
    for (const item of itemsOf('/changing')) expect(item).toMatchObject({ label: 'tagged', userData: { from: 'start' }, status: 200 });
  });
});
