import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGroupLimiter } from '@crawlq/group-limiter';
import { gateKeyPrefix } from '@crawlq/redis';
import { exited } from './support/cli.js';
import { Fleet } from './support/fleet.js';
import { byHost, peakInFlight } from './support/politeness.js';
import { duplicates, readRecords } from './support/records.js';

let redis: TestRedis;
let fleet: Fleet | undefined;
const sites: DemoSite[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
});
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
  await Promise.all(sites.splice(0).map((site) => site.close()));
});
afterAll(async () => redis.stop());

function newFleet(namespace: string, flags: string[]): Fleet {
  return new Fleet({
    redisUrl: redis.url,
    dir: mkdtempSync(join(tmpdir(), 'crawlq-fleet-')),
    flags: ['--namespace', namespace, '--allow-private-network', '--concurrency', '8', ...flags],
  });
}

async function site(spec: Parameters<typeof startDemoSite>[0]): Promise<DemoSite> {
  const started = await startDemoSite(spec);
  sites.push(started);
  return started;
}

describe('fleet-wide politeness under failure and load', () => {
  it('kill -9 of a worker holding slots: capacity comes back within the lease time and the crawl completes', { timeout: 150_000 }, async () => {
    const host = '127.0.0.40';
    // Enough pages that the victim alone cannot finish the crawl while the
    // second worker starts (seconds on a loaded machine): 40 pages at 1.5 s
    // each, two at a time, keep it busy for 30 s at least.
    const web = await site({ hosts: [host], pagesPerHost: 40, linksPerPage: 2 });
    web.setFaults([{ status: 200, delayMs: 1_500 }]);
    const leaseMs = 3_000;
    fleet = newFleet('fleet-kill', ['--rate', 'none', '--domain-concurrency', '2', '--lease-time', `${leaseMs}ms`, '--request-timeout', '2s', '--stall-timeout', '4s', '--max-depth', '20']);
    const victim = await fleet.start();
    await fleet.cli(['enqueue', ...web.seeds]);
    // Wait until the victim holds both slots of the group, then start a second
    // worker (it is denied while the victim holds them) and kill the victim.
    await waitFor(() => (web.requests.filter((request) => Number.isNaN(request.endedAt)).length >= 2 ? true : undefined), {
      what: () => `two requests in flight (the server saw ${web.requests.length} requests, the last at ${web.requests.at(-1)?.startedAt ?? 'none'}; now ${Date.now()})`,
    });
    await fleet.start();
    const group = `${host}:${web.port}`;
    const limiter = createGroupLimiter({ redis: redis.client(), prefix: gateKeyPrefix('fleet-kill') });
    // Both slots held, as the gate counts them: read until seen (a page ends and
    // the next starts between two reads on a slow machine), then the kill at once.
    await waitFor(
      async () => (web.requests.filter((request) => Number.isNaN(request.endedAt)).length >= 2 && (await limiter.status(group)).inFlight === 2 ? true : undefined),
      { what: 'two requests in flight again, both slots held at the gate' },
    );
    victim.kill('SIGKILL');
    await exited(victim);
    const killedAt = Date.now();
    // The dead worker's two leases are phantoms now: the gate counts them in
    // flight although the server sees nothing of them. They must expire by
    // themselves within the lease time, giving the capacity back.
    const recoveredAt = await waitFor(
      async () => {
        const leased = (await limiter.status(group)).inFlight;
        const live = web.requests.filter((request) => Number.isNaN(request.endedAt)).length;
        return leased <= live ? Date.now() : undefined;
      },
      { intervalMs: 100, timeoutMs: 30_000, what: 'the dead worker\'s leases to expire' },
    );
    expect(recoveredAt - killedAt).toBeLessThan(leaseMs + 1_000);
    await fleet.waitUntilDone();

    expect(peakInFlight(web.requests.filter((request) => !request.aborted))).toBeLessThanOrEqual(2);
    // Every page ended up in a results file exactly once, including the jobs the victim had in hand.
    const urls = fleet.resultFiles().flatMap((file) => readRecords(file)).map((record) => record.url);
    expect(duplicates(urls)).toEqual([]);
    expect(new Set(urls)).toEqual(web.reachable({ seeds: web.seeds, maxDepth: 20, scope: 'host' }));
  });

  it('one group with 2,000 URLs does not hold up 20 small groups', { timeout: 150_000 }, async () => {
    const huge = '127.0.0.41';
    const small = Array.from({ length: 20 }, (_, i) => `127.0.0.${50 + i}`);
    const web = await site({ hosts: [huge, ...small], pagesPerHost: 20, linksPerPage: 1 });
    const crawlFlags = ['--rate', '10/1s', '--domain-concurrency', '2', '--max-depth', '0'];
    fleet = newFleet('fleet-huge', crawlFlags);
    // The huge backlog is enqueued first, so a FIFO queue would serve it first.
    const hugeUrls = Array.from({ length: 2_000 }, (_, i) => `http://${huge}:${web.port}/missing/${i}`);
    const smallUrls = small.flatMap((host) => Array.from({ length: 20 }, (_, page) => web.urlOf(host, page)));
    // The crawl definition comes from the enqueue (workers with other values would refuse to start).
    const enqueued = await fleet.cli(['enqueue', '--file', '-', '--allow-private-network', ...crawlFlags], [...hugeUrls, ...smallUrls].join('\n'));
    expect(enqueued.stdout).toContain('accepted 2400');
    await Promise.all([fleet.start(), fleet.start(), fleet.start()]);
    const pageRequests = () => web.requests.filter((request) => request.path !== '/robots.txt');
    await waitFor(() => {
      const hosts = byHost(pageRequests());
      return small.every((host) => (hosts.get(host)?.length ?? 0) >= 20) ? true : undefined;
    }, {
      timeoutMs: 60_000,
      what: 'the small groups to finish',
    });
    const served = byHost(pageRequests());
    const smallDone = Math.max(...small.flatMap((host) => (served.get(host) ?? []).map((request) => request.endedAt)));
    const hugeStarts = (served.get(huge) ?? []).map((request) => request.startedAt).sort((a, b) => a - b);
    // At 10/s, the huge group's 60th request cannot start before ~6 s of its
    // own pacing; every small group (2 s of pacing each) is done before then.
    expect(hugeStarts.length).toBeLessThan(2_000);
    expect(hugeStarts.filter((start) => start < smallDone).length).toBeLessThan(60);
    for (const host of small) expect(served.get(host)).toHaveLength(20);
  });

  it('admin pause and resume work while a crawl runs', { timeout: 150_000 }, async () => {
    const [paused, other] = ['127.0.0.42', '127.0.0.43'];
    // 60 pages, 12 s at the rate: the other group still has pages left once the pause command has
    // returned (a command took seconds on a loaded machine, and with 30 pages the group was nearly done).
    const web = await site({ hosts: [paused, other], pagesPerHost: 60, linksPerPage: 2 });
    fleet = newFleet('fleet-pause', ['--rate', '5/1s', '--domain-concurrency', '2', '--max-depth', '50']);
    await Promise.all([fleet.start(), fleet.start(), fleet.start()]);
    await fleet.cli(['enqueue', ...web.seeds]);
    const group = `${paused}:${web.port}`;
    await waitFor(() => ((byHost(web.requests).get(paused)?.length ?? 0) >= 3 ? true : undefined), { what: 'the crawl to start' });
    const pause = await fleet.cli(['group', 'pause', group, '--for', '10m']);
    expect(pause.code, pause.stderr).toBe(0);
    const pausedAt = performance.timeOrigin + performance.now();
    const listed = JSON.parse((await fleet.cli(['group', 'list', '--json'])).stdout) as { group: string; pausedUntil: number | null }[];
    expect(listed.find((entry) => entry.group === group)?.pausedUntil).toBeGreaterThan(Date.now() + 500_000);
    // The other group goes on: four of its requests after the pause (counted,
    // not timed: a loaded machine takes longer, not fewer), and at least 3 s.
    const after = (host: string) => (byHost(web.requests).get(host) ?? []).filter((request) => request.startedAt > pausedAt + 700);
    await Promise.all([sleep(3_000), waitFor(() => (after(other).length > 3 ? true : undefined), { timeoutMs: 60_000, what: () => `the other group to go on (${after(other).length} of its ${byHost(web.requests).get(other)?.length ?? 0} requests after the pause)` })]);
    // Requests already admitted may still land in the first moment; none after.
    expect(after(paused)).toEqual([]);
    expect((await fleet.status()).done).toBe(false);

    const resume = await fleet.cli(['group', 'resume', group]);
    expect(resume.code, resume.stderr).toBe(0);
    await fleet.waitUntilDone();
    const urls = fleet.resultFiles().flatMap((file) => readRecords(file)).map((record) => record.url);
    expect(new Set(urls)).toEqual(web.reachable({ seeds: web.seeds, maxDepth: 50, scope: 'host' }));
  });
});
