import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChildProcess } from 'node:child_process';
import { peakInFlight, startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { crawlJobUnits, openCrawlQueue, type CrawlQueue } from '@crawlq/queue';
import { shardNamespaces } from '@crawlq/redis';
import { maxInWindow, startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { exited } from './support/cli.js';
import { Fleet } from './support/fleet.js';
import { byHost } from './support/politeness.js';
import { readRecords } from './support/records.js';

let redis: TestRedis;
let fleet: Fleet | undefined;
let web: DemoSite | undefined;

beforeAll(async () => {
  redis = await startTestRedis();
});
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
  await web?.close();
  web = undefined;
});
afterAll(async () => redis.stop());

/**
 * Of each active job (a dead worker's, until the stalled-job check hands it
 * over), the URL it has in hand: the one its progress names, since a job of
 * several URLs records each it moves on to (those before it were recorded).
 */
async function activeUrlsInHand(queue: CrawlQueue): Promise<{ urls: string[]; jobsOfSeveral: number }> {
  const jobs = await queue.getJobs(['active']);
  const urls = jobs.map((job) => {
    const units = crawlJobUnits(String(job.id), job.data);
    return (units[typeof job.progress === 'number' ? job.progress : 0] ?? units[0])!.url;
  });
  return { urls, jobsOfSeveral: jobs.filter((job) => job.data.batch !== undefined).length };
}

describe('two-stage frontier: every worker releases the backlogs into the queue', () => {
  // With 3 shards each worker releases every shard's backlog and takes every shard's jobs.
  it.each([1, 3])('kill -9 of workers (each one a releaser) mid-crawl, --shards %i: no URL lost, none fetched twice but what the dead worker had in hand, politeness held at the server', { timeout: 240_000 }, async (shards) => {
    const hosts = ['127.0.0.61', '127.0.0.62', '127.0.0.63', '127.0.0.64', '127.0.0.65', '127.0.0.66'];
    web = await startDemoSite({ hosts, pagesPerHost: 40, linksPerPage: 3 });
    web.setFaults([{ status: 200, delayMs: 60 }]);
    const site = web;
    fleet = new Fleet({
      redisUrl: redis.url,
      dir: mkdtempSync(join(tmpdir(), 'crawlq-two-stage-')),
      flags: [
        '--namespace', `two-stage-${shards}`, '--shards', String(shards), '--allow-private-network', '--concurrency', '8', '--max-depth', '20',
        '--rate', '10/1s', '--domain-concurrency', '2', '--lease-time', '6s', '--stall-timeout', '4s', '--request-timeout', '5s',
      ],
    });
    const workers: ChildProcess[] = [await fleet.start(), await fleet.start(), await fleet.start()];
    await fleet.cli(['enqueue', ...site.seeds]);
    const pages = () => site.requests.filter((request) => !request.path.startsWith('/robots.txt'));
    // What the dead worker had in hand: requests in flight at the server, and its
    // jobs still active (a page fetched and recorded whose job was not yet marked
    // done, or had not yet moved on from it). Only those may be fetched twice.
    const queues = shardNamespaces(`two-stage-${shards}`, shards).map((shard) => openCrawlQueue({ url: redis.url }, shard));
    const inFlightAtKills = new Set<string>();
    for (const share of [0.2, 0.45]) {
      const target = Math.ceil(hosts.length * 40 * share);
      await waitFor(() => (pages().length >= target ? true : undefined), { timeoutMs: 120_000, what: `${target} page requests` });
      const victim = workers.shift()!;
      victim.kill('SIGKILL');
      await exited(victim);
      // Listed at once: BullMQ hands the dead worker's jobs over only after --stall-timeout (4 s).
      for (const queue of queues) for (const url of (await activeUrlsInHand(queue)).urls) inFlightAtKills.add(url);
      for (const request of pages()) if (Number.isNaN(request.endedAt) || request.aborted) inFlightAtKills.add(request.url);
      workers.push(await fleet.start());
    }
    await Promise.all(queues.map((queue) => queue.close()));
    await fleet.waitUntilDone(180_000);

    const reachable = site.reachable({ seeds: site.seeds, maxDepth: 20, scope: 'host' });
    const requested = new Map<string, number>();
    for (const request of pages()) requested.set(request.url, (requested.get(request.url) ?? 0) + 1);
    // Nothing lost: every page was requested, and recorded.
    expect(new Set(requested.keys())).toEqual(reachable);
    const recorded = fleet.resultFiles().flatMap((file) => readRecords(file)).map((record) => record.url);
    expect(new Set(recorded)).toEqual(reachable);
    // Nothing fetched twice except what a killed worker had in flight.
    const twice = [...requested].filter(([, count]) => count > 1).map(([url]) => url);
    expect(twice.filter((url) => !inFlightAtKills.has(url))).toEqual([]);
    console.log(`two-stage kill -9, --shards ${shards}: ${requested.size} pages, ${twice.length} fetched twice, ${inFlightAtKills.size} in the dead workers' hands`);
    // Politeness held per host, as the server saw it (a killed worker's aborted requests left early).
    for (const [host, requests] of byHost(pages().filter((request) => !request.aborted))) {
      expect(peakInFlight(requests), host).toBeLessThanOrEqual(2);
      // 10/1s with the gate's margins: never more than 10 starts in any second.
      expect(maxInWindow(requests.map((request) => request.startedAt), 1_000), host).toBeLessThanOrEqual(10);
    }
    // The backlogs and the queue are empty at the end.
    const status = await fleet.status();
    expect(status).toMatchObject({ done: true, waiting: 0, delayed: 0, active: 0 });
    expect(status.backlog).toBe(0);
  });

  it('jobs of several URLs: kill -9 mid-job; the worker that takes the job over starts at the URL the dead one had in hand: none lost, none fetched twice but that', { timeout: 180_000 }, async () => {
    const host = '127.0.0.67';
    web = await startDemoSite({ hosts: [host], pagesPerHost: 200, linksPerPage: 0 });
    web.setFaults([{ status: 200, delayMs: 40 }]);
    const site = web;
    fleet = new Fleet({
      redisUrl: redis.url,
      dir: mkdtempSync(join(tmpdir(), 'crawlq-batched-')),
      flags: [
        '--namespace', 'batched', '--allow-private-network', '--concurrency', '4', '--max-depth', '0', '--rate', 'none',
        '--domain-concurrency', '4', '--lease-time', '6s', '--stall-timeout', '4s', '--request-timeout', '5s',
      ],
    });
    const seeds = Array.from({ length: 200 }, (_, i) => site.urlOf(host, i));
    const victim = await fleet.start();
    // 200 waiting against the worker's queue target of 24 (concurrency x 2 + 16): jobs of 8 URLs.
    await fleet.cli(['enqueue', ...seeds]);
    const pages = () => site.requests.filter((request) => !request.path.startsWith('/robots.txt'));
    await waitFor(() => (pages().length >= 40 ? true : undefined), { timeoutMs: 60_000, what: '40 page requests' });
    victim.kill('SIGKILL');
    await exited(victim);
    // In hand: requests still open at the server, and of each job the dead worker
    // held, the URL its progress names (those before it were recorded).
    const queue = openCrawlQueue({ url: redis.url }, 'batched');
    const active = await activeUrlsInHand(queue);
    const inHand = new Set(active.urls);
    const severalUrls = active.jobsOfSeveral;
    for (const request of pages()) if (Number.isNaN(request.endedAt) || request.aborted) inHand.add(request.url);
    await queue.close();
    expect(severalUrls).toBeGreaterThan(0);
    await fleet.start();
    await fleet.waitUntilDone(120_000);

    const requested = new Map<string, number>();
    for (const request of pages()) requested.set(request.url, (requested.get(request.url) ?? 0) + 1);
    expect(new Set(requested.keys())).toEqual(new Set(seeds));
    const recorded = fleet.resultFiles().flatMap((file) => readRecords(file)).map((record) => record.url);
    expect(new Set(recorded)).toEqual(new Set(seeds));
    const twice = [...requested].filter(([, count]) => count > 1).map(([url]) => url);
    expect(twice.filter((url) => !inHand.has(url))).toEqual([]);
    console.log(`jobs of several URLs, kill -9: ${requested.size} pages, ${severalUrls} such jobs in the dead worker's hands, ${twice.length} pages fetched twice, ${inHand.size} URLs in hand`);
  });
});
