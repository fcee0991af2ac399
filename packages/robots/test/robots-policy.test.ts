import { freePort, startTestRedis, waitFor, type TestRedis } from '@crawlq/testing';
import { InvalidUrlError } from '@crawlq/urls';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRobotsPolicy, RobotsOptionsError, RobotsStoreError, type RobotsPolicyOptions } from '../src/index.js';
import { fetchRobots, serve, sleep, startSite, testPrefix, type TestSite } from './support.js';

const UA = 'crawlq/0.1 (+https://crawlq.test/bot)';

let redis: TestRedis;
let client: Redis;
const sites: TestSite[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  client = redis.client();
});
afterAll(async () => redis.stop());
afterEach(async () => {
  await Promise.all(sites.splice(0).map((site) => site.close()));
});

async function site(handle: TestSite['handle']): Promise<TestSite> {
  const started = await startSite(handle);
  sites.push(started);
  return started;
}

function policy(overrides: Partial<RobotsPolicyOptions> = {}) {
  return createRobotsPolicy({ redis: client, prefix: testPrefix(), userAgent: UA, fetchRobots, ...overrides });
}

describe('rules from a served robots.txt', () => {
  it('applies our group over the * group, and * to other crawlers', async () => {
    const s = await site(serve('User-agent: *\nDisallow: /\n\nUser-agent: crawlq\nDisallow: /private\n'));
    const robots = policy();
    const open = await robots.check(`${s.origin}/public`);
    expect(open).toEqual({
      allowed: true,
      reason: 'allowed',
      crawlDelayMs: null,
      sitemaps: [],
      robotsUrl: `${s.origin}/robots.txt`,
      retryAfterMs: null,
      failure: null,
    });
    expect(await robots.check(`${s.origin}/private/1`)).toMatchObject({ allowed: false, reason: 'disallowed' });
    const other = policy({ userAgent: 'otherbot/1.0' });
    expect(await other.check(`${s.origin}/public`)).toMatchObject({ allowed: false, reason: 'disallowed' });
    // Three checks by the first policy, one by the second: one fetch per policy (separate prefixes).
    expect(s.hits.get('/robots.txt')).toBe(2);
  });

  it('uses the longest match, and Allow when equally long', async () => {
    const s = await site(serve('User-agent: *\nDisallow: /shop\nAllow: /shop/public\nAllow: /same\nDisallow: /same\nDisallow: /*.pdf$\n'));
    const robots = policy();
    const allowed = async (path: string) => (await robots.check(`${s.origin}${path}`)).allowed;
    expect(await allowed('/shop/cart')).toBe(false);
    expect(await allowed('/shop/public/a')).toBe(true);
    expect(await allowed('/same')).toBe(true);
    expect(await allowed('/doc/a.pdf')).toBe(false);
    expect(await allowed('/doc/a.pdf?page=2')).toBe(true);
  });

  it('turns Crawl-delay seconds into ms and caps it', async () => {
    const slow = await site(serve('User-agent: crawlq\nCrawl-delay: 2.5\n'));
    const slower = await site(serve('User-agent: *\nCrawl-delay: 3600\n'));
    const robots = policy({ maxCrawlDelayMs: 10_000 });
    expect((await robots.check(`${slow.origin}/`)).crawlDelayMs).toBe(2500);
    expect((await robots.check(`${slower.origin}/`)).crawlDelayMs).toBe(10_000);
  });

  it('lists Sitemap lines as absolute URLs, resolved against where robots.txt ended up', async () => {
    const s = await site((request, response) => {
      if (request.url === '/robots.txt') {
        response.writeHead(301, { location: '/moved/robots.txt' }).end();
      } else {
        serve('Sitemap: https://cdn.example.com/sitemap.xml\nSitemap: maps/s2.xml\nSitemap: javascript:alert(1)\nSitemap: maps/s2.xml\nUser-agent: *\nDisallow: /x\n')(request, response);
      }
    });
    const verdict = await policy().check(`${s.origin}/x`);
    expect(verdict.reason).toBe('disallowed'); // the redirect was followed and its body used
    expect(verdict.sitemaps).toEqual(['https://cdn.example.com/sitemap.xml', `${s.origin}/moved/maps/s2.xml`]);
    expect(verdict.robotsUrl).toBe(`${s.origin}/robots.txt`);
    expect(s.hits.get('/moved/robots.txt')).toBe(1);
  });

  it('parses robots.txt whatever its Content-Type, with a BOM and CRLF', async () => {
    const s = await site(serve(Buffer.from('\uFEFFUser-agent: crawlq\r\nDisallow: /x\r\n'), 200, { 'content-type': 'image/png' }));
    expect((await policy().check(`${s.origin}/x`)).allowed).toBe(false);
  });

  it('parses only the first maxBytes of a 10 MB robots.txt, and stores no more', async () => {
    const head = 'User-agent: *\nDisallow: /early\n';
    const filler = `# ${'x'.repeat(1000)}\n`.repeat(10_000);
    const s = await site(serve(`${head}${filler}Disallow: /late\n`));
    const prefix = testPrefix();
    const robots = policy({ prefix, maxBytes: 64 * 1024 });
    expect((await robots.check(`${s.origin}/early`)).allowed).toBe(false);
    expect((await robots.check(`${s.origin}/late`)).allowed).toBe(true);
    const stored = await client.hgetall(`${prefix}:${s.origin}`);
    expect(stored['outcome']).toBe('rules');
    expect(stored['truncated']).toBe('1');
    expect(Buffer.byteLength(stored['body'] ?? '')).toBeLessThanOrEqual(64 * 1024);
    expect(stored['body']?.startsWith(head)).toBe(true);
  });
});

describe('unavailable and unreachable robots.txt', () => {
  it('allows everything when robots.txt is 404', async () => {
    const s = await site(serve('not found', 404));
    expect(await policy().check(`${s.origin}/anything`)).toMatchObject({ allowed: true, reason: 'allowed', crawlDelayMs: null, sitemaps: [] });
  });

  it('disallows everything after a 500 until the backoff passes, then fetches again', async () => {
    const s = await site(serve('oops', 500));
    const robots = policy({ firstRetryMs: 1_000 });
    const first = await robots.check(`${s.origin}/a`);
    expect(first).toMatchObject({ allowed: false, reason: 'unreachable', failure: { status: 500, error: 'HTTP 500', failures: 1 } });
    expect(first.retryAfterMs).toBeGreaterThan(0);
    expect(first.retryAfterMs).toBeLessThanOrEqual(1_000);
    expect((await robots.check(`${s.origin}/b`)).reason).toBe('unreachable');
    expect(s.hits.get('/robots.txt')).toBe(1);

    s.handle = serve('User-agent: *\nDisallow: /b\n');
    await sleep(1_100);
    expect(await robots.check(`${s.origin}/a`)).toMatchObject({ allowed: true, reason: 'allowed', failure: null });
    expect((await robots.check(`${s.origin}/b`)).reason).toBe('disallowed');
    expect(s.hits.get('/robots.txt')).toBe(2);
  });

  it("fetches again after a 429's Retry-After, capped by maxRetryAfterMs", async () => {
    const s = await site(serve('slow down', 429, { 'retry-after': '2' }));
    const verdict = await policy().check(`${s.origin}/`);
    expect(verdict).toMatchObject({ reason: 'unreachable', failure: { status: 429 } });
    expect(verdict.retryAfterMs).toBeGreaterThan(1_000);
    expect(verdict.retryAfterMs).toBeLessThanOrEqual(2_000);
    const capped = await site(serve('come back tomorrow', 503, { 'retry-after': '86400' }));
    const long = await policy({ maxRetryAfterMs: 5_000 }).check(`${capped.origin}/`);
    expect(long.retryAfterMs).toBeGreaterThan(4_000);
    expect(long.retryAfterMs).toBeLessThanOrEqual(5_000);
  });

  it('backs off on a 503 that never ends and gives up once the retry budget is spent, with the status', async () => {
    const s = await site(serve('down', 503));
    const prefix = testPrefix();
    const robots = policy({ prefix, firstRetryMs: 1_000, retryBudgetMs: 2_500 });
    const started = Date.now();
    let verdict = await robots.check(`${s.origin}/x`);
    const waits: number[] = [];
    while (verdict.reason === 'unreachable') {
      waits.push(verdict.retryAfterMs ?? 0);
      expect(Date.now() - started).toBeLessThan(30_000);
      await sleep((verdict.retryAfterMs ?? 0) + 20);
      verdict = await robots.check(`${s.origin}/x`);
    }
    expect(verdict).toMatchObject({ allowed: false, reason: 'gave-up', retryAfterMs: null, failure: { status: 503, error: 'HTTP 503' } });
    // Given up only by a failure once the budget had passed, every failure counted.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);
    const fetches = s.hits.get('/robots.txt') ?? 0;
    expect(fetches).toBeGreaterThanOrEqual(2);
    expect(verdict.failure?.failures).toBe(fetches);
    // The first wait is the first backoff step; no wait outlasts the budget.
    expect(waits[0]).toBeLessThanOrEqual(1_000);
    for (const wait of waits) expect(wait).toBeLessThanOrEqual(2_500);
    // The given-up verdict is shared and held: no fetch meanwhile, and the run is over.
    expect((await policy({ prefix }).check(`${s.origin}/y`)).reason).toBe('gave-up');
    expect(s.hits.get('/robots.txt')).toBe(fetches);
    expect(await client.exists(`${prefix}:failing:${s.origin}`)).toBe(0);
  });

  it('parses the first maxBytes of a body the fetch cut short, dropping the incomplete last line', async () => {
    const robots = policy({
      maxBytes: 40,
      fetchRobots: (robotsUrl) =>
        Promise.resolve({
          status: 200,
          body: Buffer.from('User-agent: *\nDisallow: /p/\nAllow: /p/ok'),
          finalUrl: robotsUrl,
          truncated: true,
        }),
    });
    expect((await robots.check('http://127.0.0.1:9/p/1')).reason).toBe('disallowed');
    // "Allow: /p/ok" may have gone on ("/p/okay-only"): not trusted.
    expect((await robots.check('http://127.0.0.1:9/p/ok')).reason).toBe('disallowed');
  });

  it('treats 429 as unreachable, not as a missing file', async () => {
    const s = await site(serve('slow down', 429));
    expect((await policy().check(`${s.origin}/`)).reason).toBe('unreachable');
  });

  it('treats a network error (closed port) as unreachable', async () => {
    const port = await freePort();
    expect(await policy().check(`http://127.0.0.1:${port}/x`)).toMatchObject({
      allowed: false,
      reason: 'unreachable',
      robotsUrl: `http://127.0.0.1:${port}/robots.txt`,
    });
  });

  it('treats a fetch that does not end within fetchTimeoutMs as unreachable', async () => {
    const s = await site(() => undefined); // never answers
    const verdict = await policy({ fetchTimeoutMs: 300 }).check(`${s.origin}/`);
    expect(verdict.reason).toBe('unreachable');
  });
});

describe('one fetch for the fleet', () => {
  it('5 policies on 5 connections checking one origin at once cause exactly one request', async () => {
    const s = await site((request, response) => {
      // Slow enough that every check arrives while the first fetch is running.
      setTimeout(() => serve('User-agent: *\nDisallow: /no\n')(request, response), 300);
    });
    const prefix = testPrefix();
    const fleet = Array.from({ length: 5 }, () => createRobotsPolicy({ redis: redis.client(), prefix, userAgent: UA, fetchRobots }));
    const verdicts = await Promise.all(
      fleet.flatMap((robots) => [robots.check(`${s.origin}/yes`), robots.check(`${s.origin}/no`), robots.check(`${s.origin}/yes/2`)]),
    );
    expect(verdicts.map((verdict) => verdict.allowed)).toEqual(Array.from({ length: 5 }, () => [true, false, true]).flat());
    expect(s.hits.get('/robots.txt')).toBe(1);
  });

  it('a fresh process uses the shared entry; after ttlMs robots.txt is fetched again', async () => {
    const s = await site(serve('User-agent: *\nDisallow: /old\n'));
    const prefix = testPrefix();
    const first = policy({ prefix, ttlMs: 600 });
    expect((await first.check(`${s.origin}/old`)).allowed).toBe(false);

    s.handle = serve('User-agent: *\nDisallow: /new\n');
    const second = policy({ prefix, ttlMs: 600 });
    expect((await second.check(`${s.origin}/old`)).allowed).toBe(false); // from Redis, no fetch
    first.clearLocalCache();
    expect((await first.check(`${s.origin}/old`)).allowed).toBe(false);
    expect(s.hits.get('/robots.txt')).toBe(1);

    await sleep(800);
    expect((await first.check(`${s.origin}/old`)).allowed).toBe(true);
    expect((await second.check(`${s.origin}/new`)).allowed).toBe(false);
    expect(s.hits.get('/robots.txt')).toBe(2);
  });

  it('takes over when the worker holding the fetch lock disappears', async () => {
    const s = await site(serve('User-agent: *\nDisallow: /x\n'));
    const prefix = testPrefix();
    // A worker that took the lock and died: nobody releases it, it expires.
    await client.set(`${prefix}:lock:${s.origin}`, 'dead-worker', 'PX', 500);
    const verdict = await policy({ prefix }).check(`${s.origin}/x`);
    expect(verdict.reason).toBe('disallowed');
    expect(s.hits.get('/robots.txt')).toBe(1);
  });

  it('gives up waiting for a lock holder that outlives the fetch timeout, without fetching', async () => {
    const s = await site(serve('User-agent: *\nDisallow: /x\n'));
    const prefix = testPrefix();
    await client.set(`${prefix}:lock:${s.origin}`, 'stuck-worker', 'PX', 60_000);
    // Waits fetchTimeoutMs + 5 s slack + 1 s.
    const verdict = await policy({ prefix, fetchTimeoutMs: 100 }).check(`${s.origin}/y`);
    expect(verdict).toMatchObject({ allowed: false, reason: 'unreachable' });
    expect(verdict.retryAfterMs).toBeGreaterThan(0);
    expect(s.hits.get('/robots.txt')).toBeUndefined();
  });
});

describe('a stop', () => {
  // A stopped fetch would otherwise be waited for up to this long: far above the bound.
  const FETCH_TIMEOUT_MS = 60_000;
  // Generous for a loaded machine, and far below the fetch timeout a stop used to wait out.
  const BOUND_MS = 5_000;

  it('cuts a robots.txt fetch in flight: the check rejects with the reason at once, nothing is stored, the lock is given back', async () => {
    let disconnected = false;
    const s = await site((request) => {
      // Never answers; the client going away is what the server sees.
      request.socket.once('close', () => (disconnected = true));
    });
    const prefix = testPrefix();
    const stop = new AbortController();
    const robots = policy({ prefix, fetchTimeoutMs: FETCH_TIMEOUT_MS, signal: stop.signal });
    const checking = robots.check(`${s.origin}/page`);
    const outcome = checking.then(() => 'resolved', (error: unknown) => error);
    await waitFor(() => s.hits.get('/robots.txt') !== undefined, { what: 'the robots.txt request', timeoutMs: 30_000, intervalMs: 10 });
    const reason = new Error('the worker is stopping');
    const stoppedAt = performance.now();
    stop.abort(reason);
    expect(await outcome).toBe(reason);
    expect(performance.now() - stoppedAt).toBeLessThan(BOUND_MS);
    // The request was aborted, not left hanging.
    await expect.poll(() => disconnected, { timeout: BOUND_MS }).toBe(true);
    // A stopped policy checks nothing more.
    await expect(robots.check(`${s.origin}/other`)).rejects.toBe(reason);

    // Nothing stored, lock free: another worker fetches at once and gets the real rules.
    s.handle = serve('User-agent: *\nDisallow: /page\n');
    const startedAt = performance.now();
    expect(await policy({ prefix, fetchTimeoutMs: FETCH_TIMEOUT_MS }).check(`${s.origin}/page`)).toMatchObject({ allowed: false, reason: 'disallowed' });
    expect(performance.now() - startedAt).toBeLessThan(BOUND_MS);
    expect(s.hits.get('/robots.txt')).toBe(2);
  });

  it("ends a wait on another worker's fetch at once", async () => {
    const s = await site(serve('User-agent: *\nDisallow: /x\n'));
    const prefix = testPrefix();
    await client.set(`${prefix}:lock:${s.origin}`, 'busy-worker', 'PX', 60_000);
    const stop = new AbortController();
    const outcome = policy({ prefix, fetchTimeoutMs: FETCH_TIMEOUT_MS, signal: stop.signal }).check(`${s.origin}/y`).then(() => 'resolved', (error: unknown) => error);
    await sleep(100);
    const reason = new Error('the worker is stopping');
    const stoppedAt = performance.now();
    stop.abort(reason);
    expect(await outcome).toBe(reason);
    expect(performance.now() - stoppedAt).toBeLessThan(BOUND_MS);
    expect(s.hits.get('/robots.txt')).toBeUndefined();
  });
});

describe('errors', () => {
  it('refuses URLs that are not absolute http(s)', async () => {
    await expect(policy().check('ftp://127.0.0.1/x')).rejects.toBeInstanceOf(InvalidUrlError);
    await expect(policy().check('/relative')).rejects.toBeInstanceOf(InvalidUrlError);
  });

  it('refuses a User-Agent without a product token and non-positive numbers', () => {
    expect(() => policy({ userAgent: '(compatible)' })).toThrow(RobotsOptionsError);
    expect(() => policy({ ttlMs: 0 })).toThrow(RobotsOptionsError);
  });

  it('reports Redis failures as retryable RobotsStoreError', async () => {
    const doomed = await startTestRedis();
    const failing = new Redis(doomed.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    failing.on('error', () => undefined); // The refused reconnects are the point of the test.
    await new Promise((resolve) => failing.once('ready', resolve));
    await doomed.stop();
    const s = await site(serve('User-agent: *\n'));
    const error: unknown = await policy({ redis: failing }).check(`${s.origin}/`).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RobotsStoreError);
    expect(error).toMatchObject({ retryable: true, operation: 'read', origin: s.origin });
    expect(s.hits.get('/robots.txt')).toBeUndefined();
    failing.disconnect();
  });
});
