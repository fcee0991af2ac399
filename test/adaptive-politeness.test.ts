import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite, type DemoSite, type RequestRecord } from '@crawlq/demo-site';
import { createGroupLimiter, type GroupStatus } from '@crawlq/group-limiter';
import { gateKeyPrefix } from '@crawlq/redis';
import { startTestRedis, type TestRedis, maxStampedInWindow } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fleet } from './support/fleet.js';
import { byHost, peakInFlight, sitesArrivalClock } from './support/politeness.js';
import { duplicates, readRecords } from './support/records.js';

const clock = sitesArrivalClock();

// Adaptive politeness, judged at the servers: three worker
// processes share one pace per host through Redis.
//  (a) LOADED answers after 100 ms x the requests in flight: a server that
//      slows down with load. Its twin FIXED behaves the same but its rule
//      turns adaptive pacing off: the same crawl, at fixed pace, side by side.
//  (b) SHEDDING answers 503 to a request when more than 5 arrived within the
//      last second: the fleet must find a pace it accepts, and finish.
//  (c) FAST is healthy: it answers in a steady 400 ms whatever its load, and
//      is crawled at the configured ceiling (20/s, with 10 slots), never above
//      it. A cut needs the average latency over twice the baseline (or the
//      baseline + 100 ms): answering at once, or in 150 ms, a loaded machine's
//      event-loop stalls in the site and the workers moved the measured
//      latency that much (seen: 111 ms over a 5 ms baseline, 173 over 72).

const LOADED = '127.0.0.110';
const FIXED = '127.0.0.111';
const SHEDDING = '127.0.0.112';
const FAST = '127.0.0.113';
const PAGES = { [LOADED]: 120, [FIXED]: 120, [SHEDDING]: 60, [FAST]: 120 } as const;
const LATENCY_PER_IN_FLIGHT_MS = 100;
const SHED_ABOVE = 5;
const FAST_LATENCY_MS = 400;
const NAMESPACE = 'adaptive';

let redis: TestRedis;
let site: DemoSite;
let fleet: Fleet | undefined;

beforeAll(async () => {
  redis = await startTestRedis();
  site = await startDemoSite({
    hosts: [LOADED, FIXED, SHEDDING, FAST],
    pagesPerHost: Math.max(...Object.values(PAGES)),
    linksPerPage: 1,
    load: {
      [LOADED]: { latencyPerInFlightMs: LATENCY_PER_IN_FLIGHT_MS },
      [FIXED]: { latencyPerInFlightMs: LATENCY_PER_IN_FLIGHT_MS },
      [SHEDDING]: { shedAbove: { max: SHED_ABOVE, durationMs: 1_000 } },
    },
  });
  site.setFaults([{ host: FAST, status: 200, delayMs: FAST_LATENCY_MS }]);
});
afterAll(async () => {
  await fleet?.stop();
  await site.close();
  await redis.stop();
});

/** Requests in flight at the server as `request` arrived, itself included. */
function inFlightAt(requests: readonly RequestRecord[], request: RequestRecord): number {
  return requests.filter((other) => other.startedAt <= request.startedAt && !(other.endedAt <= request.startedAt)).length;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** The second half of a host's requests, by arrival. */
function lastHalf(requests: readonly RequestRecord[]): RequestRecord[] {
  const sorted = [...requests].sort((a, b) => a.startedAt - b.startedAt);
  return sorted.slice(Math.floor(sorted.length / 2));
}

describe('adaptive politeness across a fleet of 3 workers', () => {
  it('slows a struggling host down to where it copes, and leaves a healthy one at its ceiling', { timeout: 240_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-adaptive-'));
    const configFile = join(dir, 'crawl.json');
    // The latency hosts have no rate and 8 slots: at fixed pace 8 requests are
    // in flight, each answered after 800 ms. FIXED keeps that: its rule turns
    // adaptive pacing off.
    writeFileSync(
      configFile,
      JSON.stringify({
        limitRules: [
          { match: LOADED, rate: 'none', concurrency: 8 },
          { match: FIXED, rate: 'none', concurrency: 8, adaptive: false },
          { match: FAST, concurrency: 10 },
        ],
      }),
    );
    fleet = new Fleet({
      redisUrl: redis.url,
      dir,
      flags: [
        '--namespace', NAMESPACE, '--allow-private-network', '--ignore-robots', '--concurrency', '10', '--config', configFile,
        '--adaptive', '--rate', '20/1s', '--domain-concurrency', '4', '--max-depth', '0', '--attempts', '10', '--backoff', '1s',
      ],
    });
    await Promise.all([fleet.start(), fleet.start(), fleet.start()]);
    const urls = Object.entries(PAGES).flatMap(([host, pages]) => Array.from({ length: pages }, (_, page) => site.urlOf(host, page)));
    // Interleaved, so every host is crawled from the start.
    urls.sort((a, b) => (a.split('/').at(-1) ?? '').localeCompare(b.split('/').at(-1) ?? ''));
    const enqueued = await fleet.cli(['enqueue', '--file', '-'], urls.join('\n'));
    expect(enqueued.code, enqueued.stderr).toBe(0);

    // Each host's pace while the crawl runs, for the log (not asserted: timing).
    const limiter = createGroupLimiter({ redis: redis.client(), prefix: gateKeyPrefix(NAMESPACE) });
    const started = Date.now();
    const samples: string[] = [];
    const sampler = setInterval(() => {
      limiter.list().then(
        (groups) => samples.push(`${((Date.now() - started) / 1000).toFixed(1)} s  ${groups.map((group) => `${group.group.split(':')[0]} ${group.paceFactor.toFixed(2)}`).join('  ')}`),
        () => undefined,
      );
    }, 1_000);
    try {
      await fleet.waitUntilDone(200_000);
    } finally {
      clearInterval(sampler);
    }
    console.log(`pace over time:\n${samples.join('\n')}`);

    // Every page fetched once, each answered 200 in the end (the 503s included).
    const records = fleet.resultFiles().flatMap((file) => readRecords(file));
    expect(duplicates(records.map((record) => record.url))).toEqual([]);
    expect(records).toHaveLength(urls.length);
    expect(records.filter((record) => record.status !== 200).map((record) => `${record.url} ${record.status}`)).toEqual([]);
    for (const file of fleet.resultFiles()) expect(readRecords(file).length).toBeGreaterThan(0);

    const hosts = byHost(site.requests);
    const served = (host: string): RequestRecord[] => hosts.get(host) ?? [];
    const latency = (request: RequestRecord): number => request.endedAt - request.startedAt;
    const groups = new Map((JSON.parse((await fleet.cli(['group', 'list', '--json'])).stdout) as GroupStatus[]).map((status) => [status.group.split(':')[0], status]));
    const report = [LOADED, FIXED, SHEDDING, FAST].map((host) => {
      const requests = served(host);
      const late = lastHalf(requests);
      const status = groups.get(host);
      return `${host}: ${requests.length} requests, 503s ${requests.filter((r) => r.status === 503).length} (last half ${late.filter((r) => r.status === 503).length}/${late.length}), in flight peak ${peakInFlight(requests)} (last half ${peakInFlight(late)}, last quarter ${peakInFlight(lastHalf(late))}), median latency ${Math.round(median(requests.map(latency)))} ms (last half ${Math.round(median(late.map(latency)))} ms); pace ${status?.paceFactor} cuts ${status?.paceCuts} (${status?.paceReason ?? 'never cut'})`;
    });
    console.log(report.join('\n'));
    const logs = fleet.logs.join('\n');

    // (a) At fixed pace the loaded server holds 8 requests and answers in ~800 ms
    // to the end. Adaptive: by the last quarter of the crawl the fleet keeps at
    // most half that in flight, and in the second half the latency is back
    // near the server's baseline (100 ms for a request alone).
    const loaded = lastHalf(served(LOADED));
    const fixed = lastHalf(served(FIXED));
    expect(peakInFlight(fixed)).toBeGreaterThanOrEqual(6);
    // The pace converges over seconds, not requests: on a busy machine the
    // first half can end before the cuts reach half the cap (seen: pace 0.63,
    // 5 in flight, early in the second half). The last quarter is judged.
    expect(peakInFlight(lastHalf(loaded))).toBeLessThanOrEqual(4);
    // Latency as the server measured it includes its own event loop's delays
    // on a loaded machine (302 ms seen for 3 in flight), so the two hosts are
    // judged against each other; the in-flight count below is the exact judge.
    const baseline = LATENCY_PER_IN_FLIGHT_MS;
    expect(median(fixed.map(latency))).toBeGreaterThanOrEqual(4 * baseline);
    expect(median(loaded.map(latency))).toBeLessThanOrEqual(median(fixed.map(latency)) / 2);
    // What the server applied: in flight at arrival x 100 ms.
    expect(median(loaded.map((request) => inFlightAt(served(LOADED), request)))).toBeLessThanOrEqual(3);
    expect(groups.get(LOADED)).toMatchObject({ adaptive: true });
    expect(groups.get(LOADED)?.paceCuts).toBeGreaterThan(0);
    expect(groups.get(LOADED)?.paceReason).toMatch(/latency \d+ ms over \d+ ms/);
    expect(logs).toMatch(new RegExp(`group ${LOADED.replace(/\./g, '\\.')}:\\d+: pace cut to 0\\.\\d+ of its limits \\(was [01]\\.\\d+\\): latency`));
    expect(groups.get(FIXED)).toMatchObject({ adaptive: false, paceFactor: 1, paceCuts: 0, paceReason: null });

    // (b) At 20/s the shedding host would refuse three requests in four. The
    // fleet halves its pace on the first 503s and climbs back slowly: few
    // 503s once the first seconds are over, and every page got its 200.
    const shedding = served(SHEDDING);
    expect(shedding.filter((request) => request.status === 503).length).toBeGreaterThan(0);
    const sheddingLate = lastHalf(shedding);
    expect(sheddingLate.filter((request) => request.status === 503).length).toBeLessThanOrEqual(Math.ceil(sheddingLate.length * 0.15));
    // The group shows its last cut's reason; on a loaded machine a latency cut
    // may follow the 503 cuts (the requests it waited on were slow too). The
    // log shows the 503 cut either way.
    expect(groups.get(SHEDDING)?.paceReason).toMatch(/HTTP 503|latency \d+ ms over \d+ ms/);
    expect(logs).toMatch(new RegExp(`group ${SHEDDING.replace(/\./g, '\\.')}:\\d+: pace cut to 0\\.\\d+ of its limits \\(was [01]\\.\\d+\\): HTTP 503`));

    // (c) The healthy host: never above its ceiling, never slowed down.
    expect(maxStampedInWindow(clock, served(FAST).map((request) => request.startedAt), 1_000)).toBeLessThanOrEqual(20);
    expect(groups.get(FAST)).toMatchObject({ adaptive: true, paceFactor: 1, paceCuts: 0, paceReason: null, effectiveConcurrency: 10 });
    expect(logs).not.toContain(`group ${FAST}:`);
  });
});
