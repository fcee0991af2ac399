import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { loadConfig } from '@crawlq/config';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openCrawlServices, publishCrawlDefinition, Seeding, type CrawlServices } from '@crawlq/crawl-control';
import { readSitemaps } from '../../src/seeding/sitemap-reader.js';

// sitemaps stream from the network into the parser, through the
// group gate; the lease is held while the body arrives and released on every
// path; entries read before a failure are kept. Real Redis, real HTTP on loopback.
const HOST = '127.0.0.93';
const OTHER_HOST = '127.0.0.94';
const MiB = 1024 * 1024;
let redis: TestRedis;
let server: Server;
let other: Server;
let origin: string;
let otherOrigin: string;
let services: CrawlServices | undefined;
/** What the server did, in order, per test. */
let events: string[] = [];
/** The server's wait in the middle of /slow.xml (set by each test that uses it). */
let midway: (response: ServerResponse) => Promise<void> = () => Promise.resolve();
/** Resolves with whether the last response the server gave for a path was finished when its connection closed. */
const closed = new Map<string, Promise<boolean>>();

const entries = (path: string, from: number, to: number): string =>
  Array.from({ length: to - from }, (_, i) => `<url><loc>${origin}/${path}/${from + i}</loc></url>`).join('');
const HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">';
const urlset = (path: string, count: number): string => `${HEAD}${entries(path, 0, count)}</urlset>`;

beforeAll(async () => {
  redis = await startTestRedis();
  server = createServer((request, response) => {
    const path = request.url ?? '/';
    closed.set(path, new Promise((resolve) => response.once('close', () => resolve(response.writableFinished))));
    response.once('close', () => events.push(`${path} closed${response.writableFinished ? '' : ' unfinished'}`));
    if (path === '/slow.xml') {
      response.writeHead(200, { 'content-type': 'application/xml' });
      response.write(`${HEAD}${entries('slow', 0, 5)}`, () => {
        events.push('first part sent');
        void midway(response).then(() => {
          if (response.destroyed) return;
          events.push('rest sent');
          response.end(`${entries('slow', 5, 10)}</urlset>`);
        });
      });
    } else if (path === '/huge.xml') {
      // 100 entries, then comments up to 60 MB, generated as they are sent.
      response.writeHead(200, { 'content-type': 'application/xml' });
      response.write(`${HEAD}${entries('huge', 0, 100)}`);
      const pad = `<!-- ${'x'.repeat(MiB - 9)} -->`;
      let sent = 0;
      const pump = (): void => {
        while (sent < 60 && !response.destroyed) {
          sent += 1;
          if (!response.write(pad)) return void response.once('drain', pump);
        }
        if (!response.destroyed) response.end('</urlset>');
      };
      pump();
    } else if (path === '/broken.xml') {
      // 50 good entries, then an element closed by the wrong tag.
      response.writeHead(200, { 'content-type': 'application/xml' }).end(`${HEAD}${entries('broken', 0, 50)}<url><loc>${origin}/never</loc></uurl></urlset>`);
    } else if (path === '/cut.xml') {
      response.writeHead(200, { 'content-type': 'application/xml' });
      response.write(`${HEAD}${entries('cut', 0, 20)}`, () => response.socket?.destroy());
    } else if (path === '/index.xml') {
      const children = [`${origin}/plain-gz.xml.gz`, `${origin}/encoded.xml`].map((loc) => `<sitemap><loc>${loc}</loc></sitemap>`);
      response.writeHead(200, { 'content-type': 'application/xml' }).end(`${HEAD.replace('urlset', 'sitemapindex')}${children.join('')}</sitemapindex>`);
    } else if (path === '/plain-gz.xml.gz') {
      response.writeHead(200, { 'content-type': 'application/gzip' }).end(gzipSync(urlset('gz', 30)));
    } else if (path === '/encoded.xml') {
      response.writeHead(200, { 'content-type': 'application/xml', 'content-encoding': 'gzip' }).end(gzipSync(urlset('encoded', 40)));
    } else if (path === '/robots.txt') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end(`User-agent: *\nAllow: /\nSitemap: ${origin}/listed.xml\n`);
    } else if (path === '/listed.xml') {
      response.writeHead(200, { 'content-type': 'application/xml' }).end(`${HEAD}${entries('listed', 0, 3)}<url><loc>${otherOrigin}/elsewhere</loc></url></urlset>`);
    } else if (path === '/moved.xml') {
      response.writeHead(302, { location: `${otherOrigin}/real.xml` }).end();
    } else {
      response.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>not found</body></html>');
    }
  });
  other = createServer((request, response) => {
    if (request.url === '/real.xml') response.writeHead(200, { 'content-type': 'application/xml' }).end(urlset('real', 7));
    else if (request.url === '/robots.txt') response.writeHead(200, { 'content-type': 'text/plain' }).end(`Sitemap: ${otherOrigin}/real.xml\n`);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  await new Promise<void>((resolve) => other.listen(0, OTHER_HOST, resolve));
  origin = `http://${HOST}:${(server.address() as { port: number }).port}`;
  otherOrigin = `http://${OTHER_HOST}:${(other.address() as { port: number }).port}`;
});
afterEach(async () => {
  await services?.close();
  services = undefined;
  events = [];
  midway = () => Promise.resolve();
});
afterAll(async () => {
  server.closeAllConnections();
  other.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await new Promise((resolve) => other.close(resolve));
  await redis.stop();
});

async function open(flags: Record<string, unknown> = {}): Promise<CrawlServices> {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-sitemaps-'));
  const config = loadConfig({
    flags: { namespace: `t-${randomUUID()}`, out: join(dir, 'out.jsonl'), stateDir: dir, allowPrivateNetwork: true, rate: 'none', requestTimeout: '20s', ...flags },
  });
  services = await openCrawlServices(config, redis.url, { role: 'producer' });
  await publishCrawlDefinition(services, 'test');
  return services;
}

/** URLs admitted: in the backlog or (released) in the queue. */
async function queued(s: CrawlServices): Promise<number> {
  const counts = await s.queue.getJobCounts('waiting', 'prioritized', 'delayed');
  return Object.values(counts).reduce((sum, count) => sum + count, await s.frontier.backlogSize());
}

/** Waits until `ready()` holds, or the response closes; says which. */
async function until(response: ServerResponse, ready: () => Promise<boolean>): Promise<boolean> {
  while (!response.destroyed) {
    if (await ready()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

async function inFlight(s: CrawlServices, url: string): Promise<number> {
  return (await s.limiter.status(s.frontier.groupOf(url))).inFlight;
}

describe('sitemaps stream from the network into the frontier', () => {
  it('enqueues the first entries while the server still holds the rest; the gate lease is held meanwhile, released after', async () => {
    const s = await open();
    let leaseWhileStreaming = -1;
    midway = async (response) => {
      // The server sends the rest only once the first five are in the queue (or the client gave up).
      if (await until(response, async () => (await queued(s)) >= 5)) events.push('first entries queued');
      leaseWhileStreaming = await inFlight(s, origin);
    };
    const lines: string[] = [];
    const result = await new Seeding(s, { log: (line) => lines.push(line), sitemaps: readSitemaps }).addSitemaps([`${origin}/slow.xml`]);
    expect(lines).toEqual([]);
    expect(events).toEqual(['first part sent', 'first entries queued', 'rest sent', '/slow.xml closed']);
    expect(result).toMatchObject({ listed: 10, accepted: 10, failed: 0 });
    expect(leaseWhileStreaming).toBe(1);
    expect(await inFlight(s, origin)).toBe(0);
  });

  // A slow download keeps its group's lease to the end: --lease-time is at
  // least --request-timeout (the config refuses less), a request's lease lasts
  // the request timeout plus a second (limitPolicyFrom), and the whole-request
  // timeout bounds every download, so no download can outlive its lease.
  // Sitemaps are read by the coordinator (`crawl`, `enqueue`), not as queue
  // jobs: there is no job lock to renew.
  it('a sitemap trickling for more than half its lease keeps the lease throughout: no second request of its group gets in, entries seeded once', async () => {
    const LEASE_MS = 4_000;
    const s = await open({ leaseTime: '4s', requestTimeout: '4s', domainConcurrency: 1 });
    const group = s.frontier.groupOf(origin);
    let streamingMs = 0;
    let leaseAfter = -1;
    let other: Awaited<ReturnType<typeof s.limiter.acquire>> | undefined;
    midway = async (response) => {
      const started = performance.now();
      // Hold the rest back until more than half the lease time has passed since the first part went out.
      while (!response.destroyed && performance.now() - started <= LEASE_MS / 2 + 200) await new Promise((resolve) => setTimeout(resolve, 50));
      streamingMs = performance.now() - started;
      leaseAfter = await inFlight(s, origin);
      // Another request to the group (domain concurrency 1) is refused while the sitemap streams.
      other = await s.limiter.acquire({ group, leaseId: `other-${randomUUID()}` });
    };
    const lines: string[] = [];
    const result = await new Seeding(s, { log: (line) => lines.push(line), sitemaps: readSitemaps }).addSitemaps([`${origin}/slow.xml`]);
    expect(lines).toEqual([]);
    expect(streamingMs).toBeGreaterThan(LEASE_MS / 2);
    expect(leaseAfter).toBe(1);
    expect(other).toMatchObject({ admitted: false, reason: 'concurrency' });
    expect(events).toEqual(['first part sent', 'rest sent', '/slow.xml closed']);
    expect(result).toMatchObject({ listed: 10, accepted: 10, duplicate: 0, failed: 0 });
    expect(await queued(s)).toBe(10);
    expect(await inFlight(s, origin)).toBe(0);
  });

  it('reads a gzipped .xml.gz and a Content-Encoding: gzip sitemap from an index, each slot released', async () => {
    const s = await open();
    const lines: string[] = [];
    const result = await new Seeding(s, { log: (line) => lines.push(line), sitemaps: readSitemaps }).addSitemaps([`${origin}/index.xml`]);
    expect(lines).toEqual([]);
    expect(result).toMatchObject({ listed: 70, accepted: 70, failed: 0 });
    expect(await inFlight(s, origin)).toBe(0);
  });

  // Memory is measured in test/chaos/sitemap-streaming.test.ts, where the reader is a process of its own.
  it('cuts a 60 MB sitemap at the 50 MiB cap while it streams: earlier entries kept, a warning, slot released', async () => {
    const s = await open();
    const lines: string[] = [];
    const result = await new Seeding(s, { log: (line) => lines.push(line), sitemaps: readSitemaps }).addSitemaps([`${origin}/huge.xml`]);
    expect(result).toMatchObject({ listed: 100, accepted: 100, failed: 1 });
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^warning: sitemap ${origin}/huge.xml skipped: .*(exceeds|larger than) 52428800 bytes`))]);
    // The download was cut, not read to its end.
    expect(await closed.get('/huge.xml')).toBe(false);
    expect(await inFlight(s, origin)).toBe(0);
  });

  it('keeps the entries before a parse error; warns; slot released', async () => {
    const s = await open();
    const lines: string[] = [];
    const result = await new Seeding(s, { log: (line) => lines.push(line), sitemaps: readSitemaps }).addSitemaps([`${origin}/broken.xml`]);
    expect(result).toMatchObject({ listed: 50, accepted: 50, failed: 1 });
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^warning: sitemap ${origin}/broken.xml skipped: .*not closed`))]);
    expect(await inFlight(s, origin)).toBe(0);
  });

  it('keeps the entries before the connection broke mid-document; warns; slot released', async () => {
    const s = await open();
    const lines: string[] = [];
    const result = await new Seeding(s, { log: (line) => lines.push(line), sitemaps: readSitemaps }).addSitemaps([`${origin}/cut.xml`]);
    expect(result).toMatchObject({ listed: 20, accepted: 20, failed: 1 });
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^warning: sitemap ${origin}/cut.xml skipped: `))]);
    expect(await inFlight(s, origin)).toBe(0);
  });

  it('an abort while the document arrives cuts the download, keeps what was read, and releases the slot', async () => {
    const s = await open();
    const controller = new AbortController();
    midway = async (response) => {
      // Abort once the first entries are queued; the rest is never sent.
      await until(response, async () => (await queued(s)) >= 5);
      controller.abort(new Error('interrupted'));
      await new Promise((resolve) => response.once('close', resolve));
    };
    const lines: string[] = [];
    const result = await new Seeding(s, { log: (line) => lines.push(line), signal: controller.signal, sitemaps: readSitemaps }).addSitemaps([`${origin}/slow.xml`, `${origin}/index.xml`]);
    // Aborting is no failure, and the next sitemap is not read.
    expect(result).toMatchObject({ listed: 5, accepted: 5, failed: 0 });
    expect(lines).toEqual([]);
    expect(await closed.get('/slow.xml')).toBe(false);
    expect(await inFlight(s, origin)).toBe(0);
  });

  it('a 404 is a warning naming the status; slot released', async () => {
    const s = await open();
    const lines: string[] = [];
    const result = await new Seeding(s, { log: (line) => lines.push(line), sitemaps: readSitemaps }).addSitemaps([`${origin}/missing.xml`]);
    expect(result).toMatchObject({ listed: 0, failed: 1 });
    expect(lines).toEqual([`warning: sitemap ${origin}/missing.xml skipped: HTTP 404 from ${origin}/missing.xml`]);
    expect(await inFlight(s, origin)).toBe(0);
  });

  it('a redirect hop to another host passes that group gate too; both slots released', async () => {
    const s = await open();
    const admitted = async (url: string) => (await s.limiter.status(s.frontier.groupOf(url))).admitted;
    const before = { here: await admitted(origin), there: await admitted(otherOrigin) };
    const result = await new Seeding(s, { log: () => undefined, sitemaps: readSitemaps }).addSitemaps([`${origin}/moved.xml`]);
    expect(result).toMatchObject({ listed: 7, failed: 0 });
    expect(await admitted(origin)).toBe(before.here + 1);
    expect(await admitted(otherOrigin)).toBe(before.there + 1);
    expect(await inFlight(s, origin)).toBe(0);
    expect(await inFlight(s, otherOrigin)).toBe(0);
  });

  it('--sitemaps reads the sitemaps in the robots.txt of every seed origin, seeds given at once or as lines; pages outside a sitemap\'s host are counted, not enqueued', async () => {
    const s = await open({ sitemaps: true });
    const lines: string[] = [];
    const seeding = new Seeding(s, { log: (line) => lines.push(line), sitemaps: readSitemaps });
    expect(await seeding.addSeeds([`${origin}/start`])).toMatchObject({ accepted: 1 });
    expect(await seeding.addSeedLines([` ${otherOrigin}/start `])).toMatchObject({ accepted: 1, lines: 1 });
    const result = await seeding.addSitemaps();
    expect(lines).toEqual([]);
    expect([...result.sitemaps].sort()).toEqual([`${origin}/listed.xml`, `${otherOrigin}/real.xml`].sort());
    // listed.xml: 3 pages on its host, 1 elsewhere; real.xml (on the other host) lists 7 pages of the first host.
    expect(result).toMatchObject({ listed: 11, outOfScope: 8, accepted: 3, failed: 0 });
    expect(await queued(s)).toBe(5);
  });

  it('without --sitemaps, robots.txt sitemaps are not read', async () => {
    const s = await open();
    const seeding = new Seeding(s, { log: () => undefined, sitemaps: readSitemaps });
    await seeding.addSeeds([`${origin}/start`]);
    expect(await seeding.addSitemaps()).toMatchObject({ sitemaps: [], listed: 0, accepted: 0 });
  });
});
