// Group-limiter benchmarks: utilisation against the politeness bound, and
// the Redis cost of deferrals when one huge group sits beside small ones.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@crawlq/config';
import { openCrawlServices, publishCrawlDefinition } from '@crawlq/crawl-control';
import type { RequestRecord } from '@crawlq/demo-site';
import { openCrawlQueue } from '@crawlq/queue';
import { startTestRedis } from '@crawlq/testing';
import { fileURLToPath } from 'node:url';
import { startSiteProcess } from './site-server.js';
import { exited, fmt, scriptLines, startCrawlq, startScript, untilCrawlDone, waitForLine, type CountedRoundTrips } from './support.js';

const ROUND_TRIP_COUNTER = fileURLToPath(new URL('./round-trip-counter.ts', import.meta.url));

interface FleetRun {
  readonly seconds: number;
  /** When the seeds were added (epoch ms, this machine's clock: comparable with the server's records). */
  readonly startedAt: number;
  readonly pages: number;
  /** Commands run inside Redis, Lua scripts' own calls included. */
  readonly redisCommands: number;
  /** Commands clients sent (MONITOR, script-internal calls left out): round trips, pipelining aside. */
  readonly roundTrips: number;
  /** Admissions given back because a worker could not start them on time. */
  readonly lateStarts: number;
  /** Starts that went out late anyway and pushed their group's pacing back. */
  readonly slippedStarts: number;
  /** Each page's `requestedAt` (epoch ms, worker clock; one machine, so comparable with the server's). */
  readonly requestedAt: ReadonlyMap<string, number>;
}

/** Starts `workers` processes, enqueues `seeds` in-process, times until the queue is drained. */
interface Limits {
  readonly rate: string;
  readonly domainConcurrency: number;
}

async function runFleet(options: { seeds: string[]; limits: Limits; workers: number }): Promise<FleetRun> {
  const { rate, domainConcurrency } = options.limits;
  const redis = await startTestRedis();
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-bench-polite-'));
  const flags = ['--namespace', 'bench', '--allow-private-network', '--ignore-robots', '--max-depth', '0', '--rate', rate, '--domain-concurrency', String(domainConcurrency)];
  const children = Array.from({ length: options.workers }, (_, i) =>
    startCrawlq(['worker', ...flags, '--concurrency', '16', '--out', join(dir, `out-${i}.jsonl`)], { REDIS_URL: redis.url }),
  );
  try {
    await Promise.all(children.map((child) => waitForLine(child, /started/)));
    const config = loadConfig({ flags: { namespace: 'bench', allowPrivateNetwork: true, maxDepth: 0, rate, domainConcurrency } });
    const services = await openCrawlServices(config, redis.url, { role: 'producer' });
    await publishCrawlDefinition(services, 'test');
    const client = redis.client();
    // The bench watches the queue on a connection of its own, left out of the counts.
    const watcherClient = redis.client();
    await watcherClient.ping();
    const watcherSource = `127.0.0.1:${(watcherClient as unknown as { stream: { localPort?: number } }).stream.localPort}`;
    const watcher = openCrawlQueue(watcherClient, 'bench');
    await client.config('RESETSTAT');
    const counter = startScript(ROUND_TRIP_COUNTER, [redis.url, watcherSource], {});
    let counterOutput = '';
    counter.stdout?.on('data', (chunk: Buffer) => (counterOutput += chunk.toString()));
    await waitForLine(counter, /ready/);
    const started = performance.now();
    const startedAtEpoch = performance.timeOrigin + started;
    await services.frontier.addSeeds(options.seeds);
    await untilCrawlDone({ queue: watcher, redis: watcherClient }, 'bench', 20);
    const seconds = (performance.now() - started) / 1000;
    counter.kill('SIGTERM');
    await exited(counter);
    const counted = JSON.parse(counterOutput.split('\n').find((line) => line.startsWith('{')) ?? '{}') as Partial<CountedRoundTrips>;
    const roundTrips = counted.roundTrips ?? Number.NaN;
    if (process.env.BENCH_BREAKDOWN) {
      console.log(counted.breakdown);
      if (counted.scripts) console.log(scriptLines(counted.scripts, options.seeds.length).join('\n'));
    }
    const calls = [...(await client.info('commandstats')).matchAll(/calls=(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
    const groups = await services.limiter.list();
    const lateStarts = groups.reduce((sum, group) => sum + group.lateStarts, 0);
    const slippedStarts = groups.reduce((sum, group) => sum + group.slippedStarts, 0);
    await watcher.close();
    watcherClient.disconnect();
    await services.close();
    // The results files, not the progress counters (flushed every 250 ms).
    const records = children.flatMap((_, i) =>
      readFileSync(join(dir, `out-${i}.jsonl`), 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { url: string; requestedAt?: string }),
    );
    const pages = records.length;
    const requestedAt = new Map(records.filter((record) => record.requestedAt).map((record) => [record.url, Date.parse(record.requestedAt!)]));
    return { seconds, startedAt: startedAtEpoch, pages, redisCommands: calls, roundTrips, lateStarts, slippedStarts, requestedAt };
  } finally {
    children.forEach((child) => child.kill('SIGTERM'));
    await Promise.all(children.map((child) => exited(child)));
    await redis.stop();
  }
}

/** The requests each host saw, in the order they started. */
function requestsByHost(requests: readonly RequestRecord[]): Map<string, RequestRecord[]> {
  const byHost = new Map<string, RequestRecord[]>();
  for (const request of requests) {
    const hostRequests = byHost.get(request.host);
    if (hostRequests) hostRequests.push(request);
    else byHost.set(request.host, [request]);
  }
  for (const hostRequests of byHost.values()) hostRequests.sort((a, b) => a.startedAt - b.startedAt);
  return byHost;
}

/**
 * How the hosts' requests spread over the crawl, as the server saw them
 * (seconds from the crawl's first request): when each host began, how long
 * from its first request to its last, and its median gap between requests.
 * Each figure is the median over hosts, then the slowest host's.
 */
export function hostTimeline(requests: readonly RequestRecord[]): string {
  const byHost = [...requestsByHost(requests).values()].filter((sorted) => sorted.length > 0);
  if (byHost.length === 0) return 'no requests';
  const origin = Math.min(...byHost.map((sorted) => sorted[0]!.startedAt));
  const median = (values: number[]): number => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] ?? 0;
  };
  const starts = byHost.map((sorted) => (sorted[0]!.startedAt - origin) / 1000);
  const spans = byHost.map((sorted) => (sorted.at(-1)!.startedAt - sorted[0]!.startedAt) / 1000);
  const gaps = byHost.map((sorted) => median(sorted.slice(1).map((request, i) => request.startedAt - sorted[i]!.startedAt)));
  // Stalls: gaps over twice the median gap, by where in the host's sequence they fall (first, middle, last third).
  const stalls = [0, 0, 0];
  let stallMs = 0;
  for (const [h, sorted] of byHost.entries()) {
    for (let i = 1; i < sorted.length; i += 1) {
      const gap = sorted[i]!.startedAt - sorted[i - 1]!.startedAt;
      if (gap <= 2 * gaps[h]!) continue;
      stalls[Math.min(2, Math.floor((3 * (i - 1)) / (sorted.length - 1)))]! += 1;
      stallMs += gap;
    }
  }
  const s = (value: number): string => value.toFixed(2);
  return `stalls (gaps over twice the host's median) ${stalls.join('/')} in the first/middle/last third, ${s(stallMs / 1000 / byHost.length)} s per host; first request median ${s(median(starts))} s (last host ${s(Math.max(...starts))} s), first to last request median ${s(median(spans))} s (longest ${s(Math.max(...spans))} s), median gap median ${Math.round(median(gaps))} ms (largest ${Math.round(Math.max(...gaps))} ms)`;
}

export function windowViolations(requests: readonly RequestRecord[], limit: number, windowMs: number, requestedAt: ReadonlyMap<string, number>): number {
  let violations = 0;
  for (const sorted of requestsByHost(requests).values()) {
    let tail = 0;
    for (let head = 0; head < sorted.length; head += 1) {
      while (sorted[head]!.startedAt - sorted[tail]!.startedAt >= windowMs) tail += 1;
      if (head - tail + 1 > limit) {
        violations += 1;
        if (process.env.BENCH_BREAKDOWN) {
          const window = sorted.slice(tail, head + 1);
          const detail = window.map((request, i) => {
            const gap = i === 0 ? 0 : Math.round(request.startedAt - window[i - 1]!.startedAt);
            const sent = requestedAt.get(request.url);
            return `+${gap} ms (server saw it ${sent === undefined ? '?' : Math.round(request.startedAt - sent)} ms after it left the worker)`;
          });
          console.log(`violation at ${window[0]!.host}: ${detail.join(', ')}`);
        }
      }
    }
  }
  return violations;
}

/**
 * Where a rate-bound run lost time, as the server saw it: per host, the first
 * start's delay after the earliest start anywhere, and the spacing lost (each
 * gap between two starts beyond `intervalMs`), split into the run's first and
 * second half. Printed with BENCH_BREAKDOWN.
 */
function lostSpacing(requests: readonly RequestRecord[], intervalMs: number): string {
  const hostStarts = [...requestsByHost(requests).values()].map((hostRequests) => hostRequests.map((request) => request.startedAt));
  const origin = Math.min(...requests.map((request) => request.startedAt));
  const end = Math.max(...requests.map((request) => request.startedAt));
  const middle = (origin + end) / 2;
  let firstDelay = 0;
  let lostEarly = 0;
  let lostLate = 0;
  let worstGap = 0;
  for (const starts of hostStarts) {
    firstDelay += (starts[0] ?? origin) - origin;
    for (let i = 1; i < starts.length; i += 1) {
      const gap = starts[i]! - starts[i - 1]!;
      worstGap = Math.max(worstGap, gap);
      if (gap <= intervalMs) continue;
      if (starts[i]! < middle) lostEarly += gap - intervalMs;
      else lostLate += gap - intervalMs;
    }
  }
  const hosts = hostStarts.length;
  const ends = hostStarts.map((starts) => (starts.at(-1) ?? origin) - origin).sort((a, b) => a - b);
  const spread = `last start per host ${fmt(ends[0] ?? 0, 0)} / ${fmt(ends[Math.floor(ends.length / 2)] ?? 0, 0)} / ${fmt(ends.at(-1) ?? 0, 0)} ms (min / median / max)`;
  return `${spread}; per host: first start ${fmt(firstDelay / hosts, 0)} ms after the first anywhere, spacing lost beyond ${intervalMs} ms ${fmt(lostEarly / hosts, 0)} ms (first half) + ${fmt(lostLate / hosts, 0)} ms (second half), widest gap ${fmt(worstGap, 0)} ms`;
}

/** How long after leaving a worker the server saw each request start: the lag no worker-side check can see. */
function serverLag(requests: readonly RequestRecord[], requestedAt: ReadonlyMap<string, number>): { p99: number; max: number } {
  const lags = requests.flatMap((request) => {
    const sent = requestedAt.get(request.url);
    return sent === undefined ? [] : [request.startedAt - sent];
  });
  lags.sort((a, b) => a - b);
  return { p99: lags[Math.floor(lags.length * 0.99)] ?? Number.NaN, max: lags.at(-1) ?? Number.NaN };
}

export async function benchPoliteness(log: (line: string) => void): Promise<void> {
  // BENCH_DEFERRAL_ONLY=1: the second part alone.
  if (!process.env.BENCH_DEFERRAL_ONLY) await benchUtilisation(log);
  // BENCH_UTILISATION_ONLY=1: the first part alone, for a quicker look at pacing.
  if (!process.env.BENCH_UTILISATION_ONLY) await benchDeferralCost(log);
}

async function benchUtilisation(log: (line: string) => void): Promise<void> {
  // Utilisation: 20 hosts x 60 pages at 5/1s, concurrency 2, three worker processes.
  const hosts = Array.from({ length: 20 }, (_, i) => `127.0.2.${i + 1}`);
  const site = await startSiteProcess({ hosts, pagesPerHost: 60, linksPerPage: 4 });
  try {
    const seeds = await site.urls(hosts.flatMap((host) => Array.from({ length: 60 }, (_, page) => [host, page] as const)));
    const run = await runFleet({ seeds, workers: 3, limits: { rate: '5/1s', domainConcurrency: 2 } });
    const bound = 60 / 5;
    const requests = await site.records();
    log(`utilisation: ${run.pages} pages (20 hosts x 60) at 5/1s, concurrency 2, 3 workers: ${fmt(run.seconds, 2)} s; politeness bound ${bound} s; ratio ${fmt(run.seconds / bound, 3)} (goal <= 1.10)`);
    log(`utilisation: window violations (more than 5 starts in any 1 s at a host, as the server saw them): ${windowViolations(requests, 5, 1000, run.requestedAt)}; starts given back as late: ${run.lateStarts}; late starts that re-paced their group: ${run.slippedStarts}`);
    if (process.env.BENCH_BREAKDOWN) {
      const starts = requests.map((request) => request.startedAt);
      const first = Math.min(...starts) - run.startedAt;
      const last = Math.max(...starts) - run.startedAt;
      console.log(`utilisation lost: ${lostSpacing(requests, 1000 / 5)}; first request ${fmt(first, 0)} ms after the seeds, last ${fmt(last, 0)} ms, done ${fmt(run.seconds * 1000, 0)} ms`);
    }
    const lag = serverLag(requests, run.requestedAt);
    log(`utilisation: the server (own process${site.raisedPriority ? ', raised priority' : ''}) saw a request start after it left the worker by ${fmt(lag.p99, 1)} ms (p99), ${fmt(lag.max, 1)} ms (max)`);
    log(`utilisation: Redis round trips per page ${fmt(run.roundTrips / run.pages, 2)}, commands run inside Redis per page ${fmt(run.redisCommands / run.pages, 1)} (the bench's own polling included)`);
  } finally {
    await site.close();
  }
}

async function benchDeferralCost(log: (line: string) => void): Promise<void> {
  // Deferral cost: one group with 2,000 URLs beside 20 groups of 20, all at 50/1s.
  const huge = '127.0.3.1';
  const small = Array.from({ length: 20 }, (_, i) => `127.0.3.${i + 10}`);
  const site2 = await startSiteProcess({ hosts: [huge, ...small], pagesPerHost: 20, linksPerPage: 1 });
  try {
    const seeds = [
      ...Array.from({ length: 2_000 }, (_, i) => `http://${huge}:${site2.port}/missing/${i}`),
      ...(await site2.urls(small.flatMap((host) => Array.from({ length: 20 }, (_, page) => [host, page] as const)))),
    ];
    const limited = await runFleet({ seeds, workers: 3, limits: { rate: '50/1s', domainConcurrency: 4 } });
    await site2.reset();
    const unlimited = await runFleet({ seeds, workers: 3, limits: { rate: 'none', domainConcurrency: 10_000 } });
    const overhead = limited.roundTrips / limited.pages - unlimited.roundTrips / unlimited.pages;
    log(`deferral cost: 2,000-URL group + 20 x 20 at 50/1s: ${limited.pages} pages in ${fmt(limited.seconds, 1)} s (bound ${2_000 / 50} s), ${fmt(limited.roundTrips / limited.pages, 2)} Redis round trips per page (${fmt(limited.redisCommands / limited.pages, 1)} commands inside Redis)`);
    log(`deferral cost: same URLs with limits out of the way: ${unlimited.pages} pages in ${fmt(unlimited.seconds, 1)} s, ${fmt(unlimited.roundTrips / unlimited.pages, 2)} round trips per page; politeness overhead ${fmt(overhead, 2)} round trips per page (goal <= 1)`);
  } finally {
    await site2.close();
  }
}
