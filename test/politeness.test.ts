import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { ArrivalClock, startTestRedis, type TestRedis, maxStampedInWindow } from '@crawlq/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './support/cli.js';
import { Fleet } from './support/fleet.js';
import { byHost, leakyBucketRejections, peakInFlight, sitesArrivalClock } from './support/politeness.js';
import { duplicates, readRecords } from './support/records.js';

const clock = sitesArrivalClock();

// Each case runs at least three worker processes against one Redis and checks
// what the servers saw: starts per sliding window and requests in flight.
let redis: TestRedis;
let site: DemoSite;
let fleet: Fleet | undefined;
const HOSTS = ['127.0.0.20', '127.0.0.21', '127.0.0.22', '127.0.0.23'];

beforeAll(async () => {
  redis = await startTestRedis();
  site = await startDemoSite({ hosts: HOSTS, pagesPerHost: 25, linksPerPage: 3, crossHostLinksPerPage: 1 });
});
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
});
afterAll(async () => {
  await site.close();
  await redis.stop();
});

function newFleet(namespace: string, flags: string[]): Fleet {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-polite-'));
  return new Fleet({
    redisUrl: redis.url,
    dir,
    flags: ['--namespace', namespace, '--allow-private-network', '--scope', 'any', '--max-depth', '100', '--concurrency', '8', ...flags],
  });
}

describe('group limits hold across the whole fleet', () => {
  it('never exceeds the rate in any window nor the concurrency cap, with 3 workers', { timeout: 150_000 }, async () => {
    site.resetRecords();
    // Slow responses make the concurrency cap matter as well as the rate.
    site.setFaults([{ status: 200, delayMs: 600 }]);
    fleet = newFleet('polite-window', ['--rate', '5/1s', '--domain-concurrency', '2']);
    await Promise.all([fleet.start(), fleet.start(), fleet.start()]);
    const enqueued = await fleet.cli(['enqueue', ...site.seeds]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    await fleet.waitUntilDone();

    const expected = site.reachable({ seeds: site.seeds, maxDepth: 100, scope: 'any' });
    const records = fleet.resultFiles().flatMap((file) => readRecords(file));
    expect(duplicates(records.map((record) => record.url))).toEqual([]);
    expect(records).toHaveLength(expected.size);
    // Every worker took part, so the limits were shared, not per process.
    for (const file of fleet.resultFiles()) expect(readRecords(file).length).toBeGreaterThan(0);

    for (const [host, requests] of byHost(site.requests.filter((request) => request.path !== '/robots.txt'))) {
      expect(maxStampedInWindow(clock, requests.map((request) => request.startedAt), 1000), host).toBeLessThanOrEqual(5);
      expect(peakInFlight(requests), host).toBeLessThanOrEqual(2);
      // The cap was reached: the check above is not vacuous.
      expect(peakInFlight(requests), host).toBe(2);
    }
    // A server running a zero-burst leaky bucket at 5/s (nginx limit_req) would
    // have rejected nothing the pacing caused, robots.txt included (it passes the
    // gate too): only starts the gate saw go out late because a worker stalled
    // after its check (slipped), none on an idle machine.
    const groups = await fleet.cli(['group', 'list', '--json']);
    const slipped = (JSON.parse(groups.stdout) as { slippedStarts: number }[]).reduce((sum, status) => sum + status.slippedStarts, 0);
    let rejected = 0;
    for (const requests of byHost(site.requests).values()) rejected += leakyBucketRejections(requests.map((request) => request.startedAt), 200);
    expect(rejected).toBeLessThanOrEqual(slipped);
  });

  it('a 429 with Retry-After pauses that host for every worker while other hosts go on', { timeout: 150_000 }, async () => {
    site.resetRecords();
    // The site stamps a request when this process's loop gets to it: a stall of the loop stamps it late (see ArrivalClock).
    const stalls = new ArrivalClock();
    const [throttled, ...others] = HOSTS;
    // Four pages of the throttled host answer 429 (Retry-After: 2) once, then 200.
    site.setFaults([{ host: throttled, path: /^\/p\/[1-4]$/, status: 429, retryAfter: '2', times: 1 }]);
    fleet = newFleet('polite-429', ['--rate', '10/1s', '--domain-concurrency', '4', '--attempts', '1', '--scope', 'host']);
    await Promise.all([fleet.start(), fleet.start(), fleet.start()]);
    await fleet.cli(['enqueue', ...site.seeds]);
    await fleet.waitUntilDone();

    const hosts = byHost(site.requests);
    const throttledRequests = (hosts.get(throttled!) ?? []).sort((a, b) => a.startedAt - b.startedAt);
    const tooManyRequests = throttledRequests.filter((request) => request.status === 429);
    expect(tooManyRequests.length).toBeGreaterThan(1);
    // Requests already in flight when the 429 arrived may land just after it;
    // nothing may *start* later than 100 ms after it and before the 2 s are
    // over. A start stamped late by a stall of this process is not a start in
    // that time: the longest stall widens the 100 ms.
    const slackMs = 100 + stalls.longestGapMs;
    stalls.stop();
    for (const refusal of tooManyRequests) {
      const during = throttledRequests.filter((request) => request.startedAt > refusal.endedAt + slackMs && request.startedAt < refusal.endedAt + 1_950);
      expect(during.map((request) => `${request.path} at +${Math.round(request.startedAt - refusal.endedAt)} ms (slack ${Math.round(slackMs)} ms)`)).toEqual([]);
    }
    // Deferred jobs kept their single attempt and succeeded.
    const records = fleet.resultFiles().flatMap((file) => readRecords(file));
    const refusedUrls = new Set(tooManyRequests.map((request) => request.url));
    const retried = records.filter((record) => refusedUrls.has(record.url));
    expect(retried.length).toBe(refusedUrls.size);
    for (const record of retried) expect(record).toMatchObject({ status: 200, attempts: 1 });
    expect((await fleet.status()).deadLettered).toBe(0);
    // Other hosts were not paused: they finished while the throttled one was still waiting.
    const throttledEnd = Math.max(...throttledRequests.map((request) => request.endedAt));
    for (const host of others) {
      const requests = hosts.get(host) ?? [];
      expect(requests.length).toBeGreaterThan(0);
      expect(Math.max(...requests.map((request) => request.endedAt))).toBeLessThan(throttledEnd);
    }
  });
});

describe('--concurrency counts requests under way, not jobs asleep until their next start', () => {
  it('one request slot serves two paced hosts in turn: a job of several URLs gives it up between its starts, and no two requests ever overlap', { timeout: 150_000 }, async () => {
    const hosts = ['127.0.0.24', '127.0.0.25'];
    // Each page links to every other of its host: after its home page, a host's backlog holds
    // all the rest at once, and a release gives them to one job, a start slot 200 ms apart each.
    const paced = await startDemoSite({ hosts, pagesPerHost: 12, linksPerPage: 11 });
    try {
      const dir = mkdtempSync(join(tmpdir(), 'crawlq-request-slots-'));
      const out = join(dir, 'results.jsonl');
      const result = await runCli(
        ['crawl', ...paced.seeds, '--out', out, '--namespace', 'request-slots', '--allow-private-network', '--scope', 'any', '--max-depth', '10', '--rate', '5/1s', '--domain-concurrency', '1', '--concurrency', '1', '--state-dir', dir],
        { env: cliEnv(redis.url), timeoutMs: 120_000 },
      );
      expect(result.code, result.stderr).toBe(0);
      const expected = paced.reachable({ seeds: paced.seeds, maxDepth: 10, scope: 'any' });
      expect(new Set(readRecords(out).map((record) => record.url))).toEqual(expected);
      // One slot: never two requests at once, robots.txt included, as the servers saw them.
      expect(peakInFlight(paced.requests)).toBe(1);
      for (const [host, requests] of byHost(paced.requests)) {
        expect(maxStampedInWindow(clock, requests.map((request) => request.startedAt), 1000), host).toBeLessThanOrEqual(5);
      }
      // Holding the only slot through the sleeps between its starts, such a job would run its
      // URLs as a block: the order at the servers would be A B AAAAAAAAAAA BBBBBBBBBBB, three
      // switches of host (and a few more where a release splits a backlog). Giving it up, the
      // two hosts take turns.
      const order = paced.requests.filter((request) => request.path !== '/robots.txt').sort((a, b) => a.startedAt - b.startedAt).map((request) => request.host);
      const switches = order.filter((host, index) => index > 0 && host !== order[index - 1]).length;
      expect(switches, order.join(' ')).toBeGreaterThanOrEqual(12);
    } finally {
      await paced.close();
    }
  });
});
