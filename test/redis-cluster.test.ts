import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { queuePrefix, shardNamespaces, shardOfGroup } from '@crawlq/redis';
import { startTestRedisCluster, type TestRedisCluster, waitFor, maxStampedInWindow } from '@crawlq/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startCapturedCli } from './support/cli.js';
import { Fleet } from './support/fleet.js';
import { byHost, peakInFlight, sitesArrivalClock } from './support/politeness.js';
import { duplicates, expectEveryPageOnce, readRecords } from './support/records.js';

const clock = sitesArrivalClock();

// crawlq pointed at one master of a local 3-master Redis Cluster
// (REDIS_URL, nothing else) crawls with several processes, keeps every limit
// as the server sees it, and rides out a restart of the master that holds the crawl.
let cluster: TestRedisCluster;
let fleet: Fleet | undefined;
const sites: DemoSite[] = [];

beforeAll(async () => {
  cluster = await startTestRedisCluster();
}, 180_000);
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
  await Promise.all(sites.splice(0).map((site) => site.close()));
});
afterAll(async () => cluster?.stop());

async function site(spec: Parameters<typeof startDemoSite>[0]): Promise<DemoSite> {
  const started = await startDemoSite(spec);
  sites.push(started);
  return started;
}

/**
 * A namespace whose slot a master other than the URL's serves: every command
 * of the crawl must be routed by the cluster client, none can pass by luck.
 */
async function namespaceAwayFromSeed(base: string): Promise<string> {
  for (let index = 0; ; index += 1) {
    const namespace = `${base}-${index}`;
    if ((await cluster.masterOf(queuePrefix(namespace))).port !== cluster.nodes[0]!.port) return namespace;
  }
}

/** Keys matching `pattern` on each master, counted by SCAN on that node alone. */
async function keysPerMaster(namespace: string, pattern = `${queuePrefix(namespace)}:*`): Promise<number[]> {
  return Promise.all(
    cluster.nodes.map(async (node) => {
      const client = cluster.nodeClient(node);
      let cursor = '0';
      let count = 0;
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        count += keys.length;
      } while (cursor !== '0');
      client.disconnect();
      return count;
    }),
  );
}

/**
 * Responses that make both limits matter whatever the machine's speed: most
 * pages answer in 300 ms, so a host's requests follow each other at the rate,
 * and every fifth page takes 2.5 s, so the host's next request starts while it
 * is still open (the cap is reached even by a fleet far slower than 5/s).
 */
const capAndRateFaults = [
  { status: 200, path: /^\/p\/\d*[05]$/, delayMs: 2500 },
  { status: 200, delayMs: 300 },
];

/**
 * Judged at the server, for a crawl at --rate 5/1s --domain-concurrency 2 of
 * slow pages: every page requested, each once (or, where a master restart
 * took a job's lock away mid-fetch, at most `refetches` pages twice: those
 * jobs ran again, through the gate like any), no host ever saw more than 5
 * starts in a second or 2 requests at once, and the cap was reached (so the
 * check is not vacuous). Returns how many pages were fetched twice.
 */
function expectPagesOncePolitely(web: DemoSite, expected: ReadonlySet<string>, { refetches = 0 }: { refetches?: number } = {}): string[] {
  const pageRequests = web.requests.filter((request) => request.path !== '/robots.txt');
  expect(new Set(pageRequests.map((request) => request.url))).toEqual(expected);
  const twice = duplicates(pageRequests.map((request) => request.url));
  expect(twice.length, twice.join(' ')).toBeLessThanOrEqual(refetches);
  expect(pageRequests.length).toBeLessThanOrEqual(expected.size + twice.length);
  const peaks: number[] = [];
  for (const [host, requests] of byHost(pageRequests)) {
    expect(maxStampedInWindow(clock, requests.map((request) => request.startedAt), 1000), host).toBeLessThanOrEqual(5);
    expect(peakInFlight(requests), host).toBeLessThanOrEqual(2);
    peaks.push(peakInFlight(requests));
  }
  expect(Math.max(...peaks)).toBe(2);
  return twice;
}

describe('crawlq on a 3-master Redis Cluster', () => {
  it('3 workers crawl every page once; the rate and the concurrency cap hold at the server', { timeout: 240_000 }, async () => {
    const hosts = ['127.0.0.81', '127.0.0.82', '127.0.0.83'];
    const web = await site({ hosts, pagesPerHost: 25, linksPerPage: 3, crossHostLinksPerPage: 1 });
    // Slow responses make the concurrency cap matter as well as the rate.
    web.setFaults([{ status: 200, delayMs: 400 }]);
    const namespace = await namespaceAwayFromSeed('cluster-fleet');
    fleet = new Fleet({
      redisUrl: cluster.url,
      dir: mkdtempSync(join(tmpdir(), 'crawlq-cluster-')),
      flags: ['--namespace', namespace, '--allow-private-network', '--scope', 'any', '--max-depth', '100', '--concurrency', '8', '--rate', '5/1s', '--domain-concurrency', '2'],
    });
    await Promise.all([fleet.start(), fleet.start(), fleet.start()]);
    const enqueued = await fleet.cli(['enqueue', ...web.seeds]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    await fleet.waitUntilDone(180_000);
    // Every worker stops cleanly on SIGTERM (closing its cluster connections does not hang).
    expect(await fleet.stop()).toEqual([0, 0, 0]);

    const expected = web.reachable({ seeds: web.seeds, maxDepth: 100, scope: 'any' });
    const perWorker = fleet.resultFiles().map((file) => readRecords(file));
    const urls = perWorker.flat().map((record) => record.url);
    // Results complete, each page written once, and every worker took part.
    expect(duplicates(urls)).toEqual([]);
    expect(new Set(urls)).toEqual(expected);
    for (const records of perWorker) expect(records.length).toBeGreaterThan(0);
    expectPagesOncePolitely(web, expected);
    // The crawl lives in its namespace's slot: on one master, not the URL's.
    const owner = await cluster.masterOf(queuePrefix(namespace));
    const counts = await keysPerMaster(namespace);
    expect(counts.filter((count) => count > 0)).toHaveLength(1);
    expect(counts[cluster.nodes.findIndex((node) => node.port === owner.port)]).toBeGreaterThan(0);
  });

  it('a URL with a database number is an input error on a cluster (exit 2, one line)', async () => {
    const result = await runCli(['status', '--json', '--namespace', 'cluster-db'], { env: cliEnv(`${cluster.url}/2`) });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(
      `crawlq: Redis at ${cluster.url} is a Redis Cluster node, and a cluster has only database 0: drop the database 2 from the URL`,
    );
  });

  it('a restart of the master that holds the crawl is ridden out: every page fetched and written once', { timeout: 420_000 }, async () => {
    const web = await site({ hosts: ['127.0.0.84', '127.0.0.85'], pagesPerHost: 100, linksPerPage: 4 });
    const namespace = await namespaceAwayFromSeed('cluster-restart');
    const owner = await cluster.masterOf(queuePrefix(namespace));
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-cluster-restart-'));
    const out = join(dir, 'results.jsonl');
    const { child, output, exited } = startCapturedCli(
      // --stall-timeout 120s: a job's lock (renewed at half of it) must outlive the time the master is away, which a
      // loaded machine stretches past the 5 s pause (at the 30 s default, one loaded run fetched 12 pages twice).
      ['crawl', ...web.seeds, '--out', out, '--namespace', namespace, '--allow-private-network', '--rate', '10/1s', '--max-depth', '1000', '--workers', '3', '--concurrency', '4', '--stall-timeout', '120s', '--state-dir', dir],
      { env: cliEnv(cluster.url) },
    );
    try {
      await waitFor(() => (readRecords(out).length >= 30 ? true : undefined), { timeoutMs: 180_000, what: 'the first pages' });
      await cluster.halt(owner); // A clean stop: the AOF (appendfsync always) is flushed, as an operator's restart would.
      const pagesAtStop = readRecords(out).length;
      await sleep(5_000);
      await cluster.start(owner);
      const pagesAtStart = readRecords(out).length;
      const restartedAt = performance.now();

      const code = await exited;

      const { stderr, stdout } = output;
      const finishSeconds = (performance.now() - restartedAt) / 1000;
      expect(code, stderr).toBe(0);
      // The cluster client stays connected to the other masters; the coordinator's probe of the
      // crawl's master noticed it was away, and said so once.
      expect(stderr.match(/lost the connection to Redis/g)).toHaveLength(1);
      // A worker may need its grace period after a master restart on a loaded machine (a
      // BullMQ blocking read retried against the returning master); reported, not failed.
      if (stderr.includes('grace period of')) process.stdout.write('redis cluster restart: a worker used its grace period to stop\n');
      const { expected, urls } = expectEveryPageOnce(web, out, { pagesAtStop, stderr, stdout });
      process.stdout.write(
        `redis cluster restart: master :${owner.port} halted after ${pagesAtStop} of ${expected.size} pages, back at ${pagesAtStart}, ${urls.length - pagesAtStart} written after it returned, exit ${finishSeconds.toFixed(1)} s after it returned\n`,
      );
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    }
  });

  it('--redis-seeds: with the node REDIS_URL names down, crawl and its workers reach the cluster through a seed; every page once', { timeout: 240_000 }, async () => {
    const web = await site({ hosts: ['127.0.0.111', '127.0.0.112', '127.0.0.113'], pagesPerHost: 10, linksPerPage: 3, crossHostLinksPerPage: 1 });
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-cluster-seeds-'));
    const out = join(dir, 'results.jsonl');
    // Port 1 on loopback: nobody listens there (a port free a moment ago could be taken by another test's server).
    const dead = 'redis://127.0.0.1:1';
    const seeds = cluster.nodes.map((node) => `127.0.0.1:${node.port}`).join(',');
    const args = ['crawl', ...web.seeds, '--out', out, '--namespace', 'cluster-seeds', '--allow-private-network', '--scope', 'any', '--max-depth', '100', '--rate', 'none', '--workers', '2', '--state-dir', dir];
    // The worker processes get the seeds from crawl (a config file), not from the environment.
    const result = await runCli(args, { env: cliEnv(dead, { REDIS_SEEDS: seeds }), timeoutMs: 180_000 });
    expect(result.code, result.stderr).toBe(0);
    const expected = web.reachable({ seeds: web.seeds, maxDepth: 100, scope: 'any' });
    const urls = readRecords(out).map((record) => record.url);
    expect(duplicates(urls)).toEqual([]);
    expect(new Set(urls)).toEqual(expected);
    // Without the seeds the same URL is an error, and seeds without a URL are an input error (exit 2, one line).
    const unseeded = await runCli(['status', '--namespace', 'cluster-seeds'], { env: cliEnv(dead), timeoutMs: 60_000 });
    expect(unseeded.code).not.toBe(0);
    expect(unseeded.stderr).toMatch(/^crawlq: cannot reach Redis at redis:\/\/127\.0\.0\.1:1\b/);
    const noUrl = await runCli(['status', '--redis-seeds', seeds, '--state-dir', dir], { env: cliEnv(undefined), timeoutMs: 60_000 });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr.trim()).toBe('crawlq: --redis-seeds: needs --redis-url (or REDIS_URL): the seeds are more nodes of the cluster it names');
  });

  it('--max-pages holds over 3 shards: the site saw exactly that many pages, from hosts of more than one shard', { timeout: 240_000 }, async () => {
    const hosts = ['127.0.0.101', '127.0.0.102', '127.0.0.103', '127.0.0.104', '127.0.0.105', '127.0.0.106'];
    // A group is host:port, and the port is the site's own: one in about 240
    // ports puts all six groups on one shard, where "more than one shard"
    // could not hold. Such a site is started again on another port.
    const shardsOfSeeds = (candidate: DemoSite) => new Set(candidate.seeds.map((seed) => shardOfGroup(new URL(seed).host, 3)));
    let web = await site({ hosts, pagesPerHost: 20, linksPerPage: 3, crossHostLinksPerPage: 2 });
    for (let tries = 0; shardsOfSeeds(web).size < 2 && tries < 5; tries += 1) web = await site({ hosts, pagesPerHost: 20, linksPerPage: 3, crossHostLinksPerPage: 2 });
    expect(shardsOfSeeds(web).size).toBeGreaterThan(1);
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-cluster-budget-'));
    const out = join(dir, 'results.jsonl');
    const result = await runCli(
      [
        'crawl', ...web.seeds, '--out', out, '--namespace', 'cluster-budget', '--shards', '3', '--max-pages', '25', '--allow-private-network', '--scope', 'any',
        '--max-depth', '1000', '--rate', 'none', '--workers', '2', '--concurrency', '8', '--state-dir', dir,
      ],
      { env: cliEnv(cluster.url), timeoutMs: 180_000 },
    );
    expect(result.code, result.stderr).toBe(0);
    const pageRequests = web.requests.filter((request) => request.path !== '/robots.txt');
    // Seeds count against the budget like any admitted URL: 25 in all, none twice.
    expect(duplicates(pageRequests.map((request) => request.url))).toEqual([]);
    expect(pageRequests).toHaveLength(25);
    expect(readRecords(out)).toHaveLength(25);
    // The site has far more pages, and they came from groups of several shards: the budget was shared out, not one shard's.
    expect(web.reachable({ seeds: web.seeds, maxDepth: 1000, scope: 'any' }).size).toBeGreaterThan(100);
    const shardsServed = new Set(pageRequests.map((request) => shardOfGroup(new URL(request.url).host, 3)));
    expect(shardsServed.size).toBeGreaterThan(1);
  });

  it(
    'a crawl of 6 shards: its keys on every master, every page written (twice only where its job ran again after its lock ran out), the rate and the cap held at the server, and a restart of every master in turn ridden out (kill -9 or a clean stop, the crawl\'s own master first)',
    { timeout: 420_000 },
    async () => {
      const hosts = ['127.0.0.91', '127.0.0.92', '127.0.0.93', '127.0.0.94', '127.0.0.95', '127.0.0.96'];
      const web = await site({ hosts, pagesPerHost: 30, linksPerPage: 3, crossHostLinksPerPage: 1 });
      web.setFaults(capAndRateFaults);
      const namespace = 'cluster-shards';
      const shards = shardNamespaces(namespace, 6);
      const dir = mkdtempSync(join(tmpdir(), 'crawlq-cluster-shards-'));
      const out = join(dir, 'results.jsonl');
      const { child, output, exited } = startCapturedCli(
        [
          'crawl', ...web.seeds, '--out', out, '--namespace', namespace, '--shards', '6', '--allow-private-network', '--scope', 'any', '--max-depth', '1000',
          '--rate', '5/1s', '--domain-concurrency', '2', '--workers', '2', '--concurrency', '8', '--state-dir', dir,
        ],
        { env: cliEnv(cluster.url) },
      );
      try {
        await waitFor(() => (readRecords(out).length >= 30 ? true : undefined), { timeoutMs: 180_000, what: 'the first pages' });
        // Every master goes away for 10 s in turn, the one with the crawl's own keys (definition,
        // counters, dead letters, alerts) first. kill -9 loses nothing acknowledged: the AOF is
        // fsynced on every write. Each restart is ridden out before the next master goes.
        const home = await cluster.masterOf(queuePrefix(namespace));
        const shardMasters = await Promise.all(shards.map((shard) => cluster.masterOf(queuePrefix(shard))));
        const restarts = [home, ...cluster.nodes.filter((node) => node.port !== home.port)].map((master, index) => ({ master, signal: index === 1 ? ('SIGTERM' as const) : ('SIGKILL' as const) }));
        const pagesAtStops: number[] = [];
        for (const [index, { master, signal }] of restarts.entries()) {
          const pagesAtStop = readRecords(out).length;
          pagesAtStops.push(pagesAtStop);
          await cluster.halt(master, signal);
          await sleep(10_000);
          await cluster.start(master);
          if (index < restarts.length - 1) {
            await waitFor(() => (readRecords(out).length >= pagesAtStop + 10 ? true : undefined), { timeoutMs: 120_000, what: `pages written after the restart of :${master.port}` });
          }
        }
        const code = await Promise.race([exited, sleep(180_000).then(() => 'still running 180 s after the last restart')]);
        const { stderr, stdout } = output;
        expect(code, stderr).toBe(0);
        // The coordinator probes every shard's master, not only its own: each outage was noticed.
        expect(stderr.match(/lost the connection to Redis/g)?.length ?? 0).toBeGreaterThanOrEqual(restarts.length);

        const expected = web.reachable({ seeds: web.seeds, maxDepth: 1000, scope: 'any' });
        const urls = readRecords(out).map((record) => record.url);
        const pagesAtStop = pagesAtStops.at(-1) ?? 0;
        expect(pagesAtStop).toBeLessThan(expected.size);
        expect(new Set(urls), `${stderr}\n${stdout}`).toEqual(expected);
        // A job in flight at a halt may have lost its lock (10 s away and the cluster's recovery can
        // outlast what is left of it) and run again: at most the fleet's 16 slots per restart.
        const fetchedTwice = expectPagesOncePolitely(web, expected, { refetches: 16 * restarts.length });
        // Only the worker holding a job writes its record, so a page is written twice only when its
        // job ran twice: written, then the lock ran out before the job's completion reached Redis
        // (on a loaded machine the recovery has outlasted the 30 s lock), and run again. The
        // operations guide says so for any outage longer than --stall-timeout.
        const writtenTwice = duplicates(urls);
        expect(writtenTwice.filter((url) => !fetchedTwice.includes(url))).toEqual([]);
        // The shards' keys (their seen-set slices stay after the crawl) are on every master, and each shard's on the master of its slot.
        const shardKeys = await keysPerMaster(namespace, `{${namespace}#*}:*`);
        expect(shardKeys.every((count) => count > 0), String(shardKeys)).toBe(true);
        expect(new Set(shardMasters.map((master) => master.port)).size).toBe(3);
        process.stdout.write(
          `redis cluster shards: keys per master ${shardKeys.join('/')}; masters restarted in turn (:${home.port} with the crawl's keys first) after ${pagesAtStops.join(', ')} of ${expected.size} pages; ${fetchedTwice.length} pages fetched twice, ${writtenTwice.length} written twice\n`,
        );
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      }
    },
  );
});

describe('crawlq on 3 masters with a replica each', () => {
  let replicated: TestRedisCluster | undefined;
  beforeAll(async () => {
    replicated = await startTestRedisCluster({ replicas: 1 });
  }, 180_000);
  afterAll(async () => replicated?.stop());

  it('kill -9 of the master with the crawl\'s own keys: its replica takes over, the crawl finishes, every page written (again only for jobs whose last writes were not replicated), the rate and the cap held', { timeout: 600_000 }, async () => {
    // The overall timeout sits above the sum of the case's own bounds (first pages 180 s,
    // promotion 60 s, the crawl's end 300 s): a slow machine fails on the step that was slow.
    // The end's bound is wider than a restart's: jobs whose locks the killed master took
    // with it wait for the stall check before they run again.
    const redis = replicated!;
    const hosts = ['127.0.0.121', '127.0.0.122', '127.0.0.123', '127.0.0.124', '127.0.0.125', '127.0.0.126'];
    const web = await site({ hosts, pagesPerHost: 20, linksPerPage: 3, crossHostLinksPerPage: 1 });
    web.setFaults(capAndRateFaults);
    const namespace = 'cluster-failover';
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-cluster-failover-'));
    const out = join(dir, 'results.jsonl');
    const { child, output, exited } = startCapturedCli(
      [
        'crawl', ...web.seeds, '--out', out, '--namespace', namespace, '--shards', '6', '--allow-private-network', '--scope', 'any', '--max-depth', '1000',
        '--rate', '5/1s', '--domain-concurrency', '2', '--workers', '2', '--concurrency', '8', '--state-dir', dir,
      ],
      { env: cliEnv(redis.url, { REDIS_SEEDS: redis.nodes.slice(1).map((node) => `127.0.0.1:${node.port}`).join(',') }) },
    );
    try {
      await waitFor(() => (readRecords(out).length >= 30 ? true : undefined), { timeoutMs: 180_000, what: 'the first pages' });
      const home = await redis.masterOf(queuePrefix(namespace));
      // Its replica holds a copy (synced, link up): only such a replica may stand in for it.
      await redis.waitUntilHealthy();
      const pagesAtStop = readRecords(out).length;
      // Gone for good: the other masters mark it failed after the node timeout, and its replica
      // is promoted by the cluster itself (no CLUSTER FAILOVER from the test).
      await redis.halt(home, 'SIGKILL');
      const killedAt = performance.now();
      const promoted = await waitFor(
        async () => {
          const master = await redis.masterOf(queuePrefix(namespace));
          return master.port === home.port ? undefined : master;
        },
        { timeoutMs: 60_000, intervalMs: 500, what: `a replica of :${home.port} promoted` },
      ).catch(async (error: unknown) => {
        const logs = await Promise.all(redis.nodes.slice(3).map(async (node) => `--- replica :${node.port}\n${(await redis.log(node)).split('\n').slice(-40).join('\n')}`));
        throw new Error(`${String(error)}\n${logs.join('\n')}`);
      });
      const promotedAfter = (performance.now() - killedAt) / 1000;
      const code = await Promise.race([exited, sleep(300_000).then(() => 'still running 300 s after the failover')]);
      const { stderr, stdout } = output;
      expect(code, stderr).toBe(0);
      const expected = web.reachable({ seeds: web.seeds, maxDepth: 1000, scope: 'any' });
      const urls = readRecords(out).map((record) => record.url);
      expect(pagesAtStop).toBeLessThan(expected.size);
      expect(new Set(urls), `${stderr}\n${stdout}`).toEqual(expected);
      // Replication is asynchronous: writes the killed master had not yet sent to its replica
      // (a job's completion, a lock) are lost with it, so a job can run again after the
      // failover and write its page a second time (as the README says). Bounded like the
      // refetches: at most the jobs the two workers had in hand, never a page lost.
      const writtenTwice = duplicates(urls);
      expect(writtenTwice.length, JSON.stringify(writtenTwice)).toBeLessThanOrEqual(16);
      const fetchedTwice = expectPagesOncePolitely(web, expected, { refetches: 16 });
      process.stdout.write(`redis cluster failover: master :${home.port} killed after ${pagesAtStop} of ${expected.size} pages, replica :${promoted.port} promoted within ${promotedAfter.toFixed(1)} s; ${fetchedTwice.length} pages fetched twice, ${writtenTwice.length} written twice\n`);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    }
  });
});
