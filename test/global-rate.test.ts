import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { startTestRedis, type TestRedis, maxStampedInWindow } from '@crawlq/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Fleet } from './support/fleet.js';
import { readRecords } from './support/records.js';
import { sitesArrivalClock } from './support/politeness.js';

const clock = sitesArrivalClock();

// --global-rate caps request starts of the whole crawl at the group gate, for
// every worker, whether or not the worker was given the flag: it travels in the
// published limit policy. Judged at the servers, all hosts together.
const HOSTS = ['127.0.0.30', '127.0.0.31', '127.0.0.32', '127.0.0.33'];

let redis: TestRedis;
let site: DemoSite;
let fleet: Fleet | undefined;

beforeAll(async () => {
  redis = await startTestRedis();
  site = await startDemoSite({ hosts: HOSTS, pagesPerHost: 25, linksPerPage: 3 });
});
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
});
afterAll(async () => {
  await site.close();
  await redis.stop();
});

describe('--global-rate', () => {
  // With --shards 3 each shard paces a whole share of the cap (4, 3 and 3) in its own keys: together they hold it.
  it.each([1, 3])('caps starts across all hosts at 10 per second, also for workers started without the flag (--shards %i)', { timeout: 400_000 }, async (shards) => {
    site.resetRecords();
    fleet = new Fleet({
      redisUrl: redis.url,
      dir: mkdtempSync(join(tmpdir(), 'crawlq-global-')),
      flags: ['--namespace', `global-cap-${shards}`, '--allow-private-network', '--scope', 'host', '--max-depth', '100', '--concurrency', '8'],
    });
    // Only the first worker is given limits (it publishes them); the other two adopt them.
    await fleet.start(['--rate', '20/1s', '--domain-concurrency', '4', '--global-rate', '10/1s', '--shards', String(shards)]);
    await Promise.all([fleet.start(), fleet.start()]);
    const enqueued = await fleet.cli(['enqueue', ...site.seeds]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    await fleet.waitUntilDone(360_000);

    const expected = site.reachable({ seeds: site.seeds, maxDepth: 100, scope: 'host' });
    const records = fleet.resultFiles().flatMap((file) => readRecords(file));
    expect(records).toHaveLength(expected.size);
    // The flagless workers did their share, so the cap held for them too.
    for (const file of fleet.resultFiles().slice(1)) expect(readRecords(file).length).toBeGreaterThan(0);

    // Four hosts at 20/s each could take 80 starts a second; the servers together saw at most 10 in any second,
    // plus one for each start the gate saw go out late because its worker stalled after the check (slipped):
    // such a start can crowd starts admitted after it (none on an idle machine; one fresh-clone run under
    // load saw 11). The politeness and nginx tests hold their hosts to the same account.
    const groups = await fleet.cli(['group', 'list', '--json']);
    expect(groups.code, groups.stderr).toBe(0);
    const slipped = (JSON.parse(groups.stdout) as { slippedStarts: number }[]).reduce((sum, status) => sum + status.slippedStarts, 0);
    const starts = site.requests.map((request) => request.startedAt);
    const peak = maxStampedInWindow(clock, starts, 1000);
    expect(peak, `${peak} starts in a second, ${slipped} slipped`).toBeLessThanOrEqual(10 + slipped);

    // Every request the servers saw passed the cap (pages and robots.txt alike).
    const list = await fleet.cli(['group', 'list']);
    expect(list.code, list.stderr).toBe(0);
    const global = /global cap: 10\/1s, pace ([\d.]+) ms .*admitted (\d+)/.exec(list.stdout);
    expect(global, list.stdout).not.toBeNull();
    expect(Number(global?.[1])).toBe(105);
    expect(Number(global?.[2])).toBeGreaterThanOrEqual(site.requests.length);
  });
});
