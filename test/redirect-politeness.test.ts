import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGroupLimiter } from '@crawlq/group-limiter';
import { gateKeyPrefix } from '@crawlq/redis';
import { maxStampedInWindow, startTestRedis, waitFor, type TestRedis } from '@crawlq/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Fleet } from './support/fleet.js';
import { peakInFlight, sitesArrivalClock } from './support/politeness.js';
import { duplicates, readRecords } from './support/records.js';
import { ScriptedHosts, type Script, type ScriptedAnswer } from './support/scripted-hosts.js';

// Redirects judged at the server: every hop is a request the site counts, so
// it passes the gate of the group it goes to, and is checked (scope,
// robots.txt) before it is made. Three worker processes, real Redis, real
// loopback servers.

interface AnyRecord {
  url: string;
  finalUrl?: string;
  status?: number;
  skipped?: string;
  redirectTo?: string;
  robotsUrl?: string;
}

let redis: TestRedis;
let fleet: Fleet | undefined;
let hosts: ScriptedHosts | undefined;
/** The hosts' arrival clock: see sitesArrivalClock. */
const clock = sitesArrivalClock();

/** The most starts certainly inside one window of `windowMs` at the server. */
function certainlyInWindow(requests: readonly { startedAt: number }[], windowMs: number): number {
  return maxStampedInWindow(clock, requests.map((request) => request.startedAt), windowMs);
}

beforeAll(async () => {
  redis = await startTestRedis();
});
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
  await hosts?.close();
  hosts = undefined;
});
afterAll(async () => redis.stop());

function newFleet(namespace: string, flags: string[]): Fleet {
  return new Fleet({
    redisUrl: redis.url,
    dir: mkdtempSync(join(tmpdir(), 'crawlq-redirect-')),
    flags: ['--namespace', namespace, '--allow-private-network', '--concurrency', '8', '--max-depth', '0', ...flags],
  });
}

function records(): AnyRecord[] {
  return fleet!.resultFiles().flatMap((file) => readRecords(file) as unknown as AnyRecord[]);
}

const html = (title: string): ScriptedAnswer => ({ status: 200, body: `<title>${title}</title>` });
const notFound: ScriptedAnswer = { status: 404, body: '' };
const robotsTxt = (body: string): ScriptedAnswer => ({ status: 200, headers: { 'content-type': 'text/plain' }, body });
const redirect = (status: number, location: string): ScriptedAnswer => ({ status, headers: { location } });

describe('redirect hops pass the gate of the group they go to', () => {
  it('a cross-host redirect chain under a rate limit stays within the limit at the target', { timeout: 480_000 }, async () => {
    const [a, b] = ['127.0.0.60', '127.0.0.61'];
    const pages = 20;
    let port = 0;
    const script: Script = (host, path) => {
      if (path === '/robots.txt') return notFound;
      // Every page of A moves to a distinct page of B; B's own pages are crawled directly too.
      if (host === a) return redirect(301, `http://${b}:${port}/moved${path}`);
      // Slow enough that the concurrency cap matters as well as the rate.
      return { ...html(path), delayMs: 300 };
    };
    hosts = await ScriptedHosts.start([a, b], script);
    port = hosts.port;
    fleet = newFleet('redirect-cross', ['--rate', '5/1s', '--domain-concurrency', '2']);
    await Promise.all([fleet.start(), fleet.start(), fleet.start()]);
    const seeds = [a, b].flatMap((host) => Array.from({ length: pages }, (_, i) => hosts!.url(host, `/p/${i}`)));
    const enqueued = await fleet.cli(['enqueue', ...seeds]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    await fleet.waitUntilDone(360_000);

    const atB = hosts.at(b);
    // B's 20 pages, the 20 pages A's redirects lead to, and its robots.txt: each once.
    expect(duplicates(atB.map((request) => request.path))).toEqual([]);
    expect(atB.filter((request) => request.path.startsWith('/moved/'))).toHaveLength(pages);
    expect(atB.length).toBeGreaterThanOrEqual(2 * pages);
    expect(certainlyInWindow(atB, 1000)).toBeLessThanOrEqual(5);
    expect(peakInFlight(atB)).toBeLessThanOrEqual(2);
    expect(certainlyInWindow(hosts.at(a), 1000)).toBeLessThanOrEqual(5);

    // A's jobs stop at the redirect and hand the target over as B's job.
    const all = records();
    expect(duplicates(all.map((record) => record.url))).toEqual([]);
    for (let i = 0; i < pages; i += 1) {
      expect(all.find((record) => record.url === hosts!.url(a, `/p/${i}`))).toMatchObject({
        skipped: 'redirect-queued',
        redirectTo: hosts.url(b, `/moved/p/${i}`),
        status: 301,
      });
      expect(all.find((record) => record.url === hosts!.url(b, `/moved/p/${i}`))).toMatchObject({ status: 200 });
    }
  });

  it('a same-host redirect counts twice: the server sees both requests spaced by the rate', { timeout: 480_000 }, async () => {
    const c = '127.0.0.62';
    const script: Script = (_host, path) => {
      if (path === '/robots.txt') return notFound;
      if (path.startsWith('/old/')) return redirect(301, path.replace('/old/', '/new/'));
      return html(path);
    };
    hosts = await ScriptedHosts.start([c], script);
    fleet = newFleet('redirect-same', ['--rate', '4/1s', '--domain-concurrency', '2']);
    await Promise.all([fleet.start(), fleet.start(), fleet.start()]);
    const seeds = Array.from({ length: 8 }, (_, i) => hosts!.url(c, `/old/${i}`));
    await fleet.cli(['enqueue', ...seeds]);
    await fleet.waitUntilDone(360_000);

    const seen = hosts.at(c);
    // 8 redirects + 8 targets + robots.txt: every hop was a request of its own...
    expect(seen.filter((request) => request.path.startsWith('/new/'))).toHaveLength(8);
    expect(duplicates(seen.map((request) => request.path))).toEqual([]);
    // ...and took its own start: a hop sent at once after its redirect
    // would put about two starts in every 262 ms ((1000 + 50) / 4), eight in a second.
    expect(certainlyInWindow(seen, 1000)).toBeLessThanOrEqual(4);
    for (let i = 0; i < 8; i += 1) {
      const old = seen.find((request) => request.path === `/old/${i}`)!;
      const target = seen.find((request) => request.path === `/new/${i}`)!;
      expect(target.startedAt).toBeGreaterThan(old.startedAt);
    }
    // Followed inline (finalUrl) or handed over when the gate held the hop back; never both.
    const all = records();
    for (let i = 0; i < 8; i += 1) {
      const record = all.find((candidate) => candidate.url === hosts!.url(c, `/old/${i}`));
      if (record?.skipped === undefined) expect(record).toMatchObject({ finalUrl: hosts.url(c, `/new/${i}`), status: 200 });
      else expect(record).toMatchObject({ skipped: 'redirect-queued', redirectTo: hosts.url(c, `/new/${i}`) });
    }
  });

  it('a redirect into a robots.txt-disallowed path or out of scope is not requested and ends as a skipped record; credentials never reach records', { timeout: 480_000 }, async () => {
    const [d, e, outside] = ['127.0.0.63', '127.0.0.64', '127.0.0.65'];
    const secret = 'pw-s3cr3t';
    let port = 0;
    const script: Script = (host, path) => {
      if (path === '/robots.txt') return host === outside ? notFound : robotsTxt('User-agent: *\nDisallow: /private/\n');
      if (host === d && path.startsWith('/go/')) return redirect(302, path.replace('/go/', '/private/'));
      if (host === d && path === '/away') return redirect(302, `http://${e}:${port}/private/x`);
      if (host === d && path === '/out') return redirect(302, `http://${outside}:${port}/page`);
      if (host === d && path === '/cred') return redirect(302, `http://user:${secret}@${d}:${port}/landing`);
      return html(path);
    };
    hosts = await ScriptedHosts.start([d, e, outside], script);
    port = hosts.port;
    fleet = newFleet('redirect-robots', ['--rate', '10/1s', '--domain-concurrency', '2', '--scope', 'host']);
    await Promise.all([fleet.start(), fleet.start(), fleet.start()]);
    const seeds = [...[0, 1, 2].map((i) => hosts!.url(d, `/go/${i}`)), hosts.url(d, '/away'), hosts.url(d, '/out'), hosts.url(d, '/cred'), hosts.url(e, '/')];
    await fleet.cli(['enqueue', ...seeds]);
    await fleet.waitUntilDone(360_000);

    // Not one request to a disallowed path, nor to the host out of scope.
    expect(hosts.requests.filter((request) => request.path.startsWith('/private/'))).toEqual([]);
    expect(hosts.at(outside)).toEqual([]);
    const all = records();
    for (const i of [0, 1, 2]) {
      expect(all.find((record) => record.url === hosts!.url(d, `/go/${i}`))).toMatchObject({
        skipped: 'robots',
        redirectTo: hosts.url(d, `/private/${i}`),
        robotsUrl: hosts.url(d, '/robots.txt'),
        status: 302,
      });
    }
    // Another host's disallowed path: handed over, and its own job is skipped by that host's robots.txt.
    expect(all.find((record) => record.url === hosts!.url(d, '/away'))).toMatchObject({ skipped: 'redirect-queued', redirectTo: hosts.url(e, '/private/x') });
    expect(all.find((record) => record.url === hosts!.url(e, '/private/x'))).toMatchObject({ skipped: 'robots', robotsUrl: hosts.url(e, '/robots.txt') });
    expect(all.find((record) => record.url === hosts!.url(d, '/out'))).toMatchObject({ skipped: 'scope', redirectTo: hosts.url(outside, '/page'), status: 302 });
    // The hop went out without the Location's credentials, and no record holds them.
    // A same-group hop is followed inline when the gate admits it within the short wait,
    // else handed over as a job of its own (on a loaded machine, either can happen).
    const landing = hosts.url(d, '/landing');
    const cred = all.find((record) => record.url === hosts!.url(d, '/cred'));
    if (cred?.skipped === 'redirect-queued') {
      expect(cred).toMatchObject({ redirectTo: landing });
      expect(all.find((record) => record.url === landing)).toMatchObject({ status: 200 });
    } else {
      expect(cred).toMatchObject({ finalUrl: landing, status: 200 });
    }
    expect(hosts.at(d).filter((request) => request.path === '/landing')).toHaveLength(1);
    for (const file of fleet.resultFiles()) expect(readFileSync(file, 'utf8')).not.toContain(secret);
    expect((await fleet.cli(['dlq', 'list', '--json'])).stdout).not.toContain(secret);
  });

  it('every request the servers saw was admitted by the gate: redirects, got retries and robots.txt included', { timeout: 480_000 }, async () => {
    const [f, g] = ['127.0.0.66', '127.0.0.67'];
    let port = 0;
    const script: Script = (host, path, seen) => {
      if (path === '/robots.txt') return seen === 1 ? robotsTxt('User-agent: *\nAllow: /\n') : notFound;
      // 503 once, then the page: got retries inside the attempt.
      if (path.startsWith('/flaky/')) return seen === 1 ? { status: 503, body: 'busy' } : html(path);
      if (path.startsWith('/same/')) return redirect(301, path.replace('/same/', '/flaky/'));
      if (path.startsWith('/cross/')) return redirect(302, `http://${host === f ? g : f}:${port}${path.replace('/cross/', '/flaky/x')}`);
      return html(path);
    };
    hosts = await ScriptedHosts.start([f, g], script);
    port = hosts.port;
    const namespace = 'redirect-count';
    fleet = newFleet(namespace, ['--rate', '20/1s', '--domain-concurrency', '2', '--fetch-retries', '2', '--fetch-backoff', '1ms']);
    await Promise.all([fleet.start(), fleet.start(), fleet.start()]);
    const seeds = [f, g].flatMap((host) => [0, 1, 2, 3, 4].flatMap((i) => [`/same/${i}`, `/cross/${i}`, `/flaky/p${i}`].map((path) => hosts!.url(host, path))));
    await fleet.cli(['enqueue', ...seeds]);
    await fleet.waitUntilDone(360_000);

    const limiter = createGroupLimiter({ redis: redis.client(), prefix: gateKeyPrefix(namespace) });
    for (const host of [f, g]) {
      const served = hosts.at(host);
      // The cases happened: retries after 503, redirect hops, robots.txt.
      expect(served.filter((request) => request.status === 503).length).toBeGreaterThanOrEqual(10);
      expect(served.filter((request) => request.status === 301 || request.status === 302).length).toBeGreaterThanOrEqual(10);
      expect(served.filter((request) => request.path === '/robots.txt')).toHaveLength(1);
      // A worker writes its releases' request counts with its next admission of the group, or
      // on a beat of its own within two seconds: the last ones come in shortly after the crawl.
      const group = `${host}:${hosts.port}`;
      await waitFor(async () => (await limiter.status(group)).started >= served.length, { what: `${host}'s started count`, timeoutMs: 30_000, intervalMs: 100 });
      const status = await limiter.status(group);
      expect(status.started, host).toBe(served.length);
      expect(status.inFlight, host).toBe(0);
    }
  });
});
