import { randomUUID } from 'node:crypto';
import { openCrawlQueue, type CrawlQueue } from '@crawlq/queue';
import { shardNamespaces, shardOfGroup } from '@crawlq/redis';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { urlFingerprint } from '@crawlq/urls';
import { Frontier, FrontierError, frontierKeys, readCrawlProgress, readShardNamespaces, recordShardCount, type FrontierSettings } from '../src/index.js';
import { grantPagesScript } from '../src/lua/admit.js';
import { releaseAll, testPacer } from './support.js';

// a crawl spread over shards keeps every group, its seen-set slice,
// backlog and jobs in one shard, and its readers sum over all of them.
let redis: TestRedis;
const queues: CrawlQueue[] = [];

const settings: FrontierSettings = {
  scope: 'any',
  include: [],
  exclude: [],
  maxDepth: 5,
  groupBy: 'host',
  sortQuery: false,
  jobPolicy: { attempts: 3, backoffMs: 100 },
};

beforeAll(async () => {
  redis = await startTestRedis();
});
afterEach(async () => {
  await Promise.all(queues.splice(0).map((queue) => queue.close()));
});
afterAll(async () => redis.stop());

/** A frontier over `count` shards, as a worker process opens it (its own connection and queues). */
function shardedFrontier(namespace: string, count: number, extra: Partial<FrontierSettings> = {}, knownSeenCapacity?: number) {
  const client = redis.client();
  const names = shardNamespaces(namespace, count);
  const shardQueues = names.map((shard) => openCrawlQueue({ url: redis.url }, shard));
  queues.push(...shardQueues);
  const shards = names.map((shard, i) => ({ namespace: shard, queue: shardQueues[i]!, pacer: testPacer(client, shard) }));
  const frontier = new Frontier({
    redis: client,
    namespace,
    queue: shardQueues[0]!,
    pacer: shards[0]!.pacer,
    settings: { ...settings, ...extra },
    shards,
    ...(knownSeenCapacity === undefined ? {} : { knownSeenCapacity }),
  });
  return { frontier, names, shardQueues, client };
}

const hosts = Array.from({ length: 10 }, (_, i) => `h${i}.test`);
const urls = hosts.flatMap((host) => [1, 2, 3].map((page) => `http://${host}/p${page}`));

describe('a frontier over shards', () => {
  it("packs a shard's jobs against its share of the queue target: the workers take from every shard", async () => {
    const { frontier } = shardedFrontier(`shards-${randomUUID()}`, 3);
    await frontier.addSeeds(Array.from({ length: 24 }, (_, i) => `http://one.test/${i}`));
    // 24 waiting in one shard, a target of 6 over 3 shards: 2 for this one, so up to 12 URLs a job.
    expect(await frontier.release({ room: 1, readyTarget: 6, slowStart: false })).toMatchObject({ jobs: 1, released: 12 });
  });

  it("puts each URL's backlog entry and job in its group's shard only, and sums the shards for readers", async () => {
    const namespace = `shards-${randomUUID()}`;
    const { frontier, names, shardQueues, client } = shardedFrontier(namespace, 3);
    expect((await frontier.addSeeds(urls)).accepted, 'all new').toBe(30);
    // Readers without a definition learn the layout from Redis.
    expect(await readShardNamespaces(client, namespace)).toEqual(names);
    const before = await readCrawlProgress(client, namespace);
    expect(before).toMatchObject({ backlog: 30, waiting: 0, seen: 30 });
    expect(await frontier.backlogSize()).toBe(30);

    expect(await releaseAll(frontier)).toBe(30);
    const perShard = await Promise.all(shardQueues.map(async (queue) => (await queue.getJobs(['prioritized', 'waiting'])).map((job) => job.data.url)));
    perShard.forEach((shardUrls, shard) => {
      for (const url of shardUrls) expect(shardOfGroup(new URL(url).host, 3), url).toBe(shard);
    });
    expect(perShard.flat().sort()).toEqual([...urls].sort());
    // The groups really were spread: more than one shard got work.
    expect(perShard.filter((shardUrls) => shardUrls.length > 0).length).toBeGreaterThan(1);
    expect(await readCrawlProgress(client, namespace)).toMatchObject({ backlog: 0, waiting: 30, seen: 30 });
    // The crawl's own namespace holds no backlog or seen-set of its own: every URL lives in a shard.
    expect(await client.exists(frontierKeys(namespace).seen, frontierKeys(namespace).backlogCount)).toBe(0);
  });

  it('another process over the same shards sees every URL as a duplicate; a redirect is claimed in its target group\'s shard', async () => {
    const namespace = `shards-${randomUUID()}`;
    const first = shardedFrontier(namespace, 3);
    await first.frontier.addSeeds(urls);
    // Nothing remembered in this process: each answer comes from the shards in Redis.
    const second = shardedFrontier(namespace, 3, {}, 0);
    expect(await second.frontier.addDiscovered(urls, 0)).toMatchObject({ accepted: 0, duplicate: 30 });
    // A redirect from h0 to a new page on h5 goes into h5's shard, once.
    const owner = urlFingerprint('http://h0.test/p1');
    expect(await second.frontier.enqueueRedirect('http://h5.test/moved', { owner, depth: 1, redirects: 1 })).toBe('queued');
    expect(await first.frontier.enqueueRedirect('http://h5.test/moved', { owner: urlFingerprint('http://h1.test/p1'), depth: 1, redirects: 1 })).toBe('seen');
    expect(await first.frontier.claim('http://h5.test/moved')).toBe(false);
    await releaseAll(first.frontier);
    const shard = shardOfGroup('h5.test', 3);
    const jobs = await first.shardQueues[shard]!.getJobs(['prioritized', 'waiting']);
    expect(jobs.filter((job) => job.data.url === 'http://h5.test/moved').map((job) => job.data.redirects)).toEqual([1]);
    expect((await readCrawlProgress(first.client, namespace)).seen).toBe(31);
  });

  it('--max-pages-per-group holds per group, each counted in its own shard', async () => {
    const namespace = `shards-${randomUUID()}`;
    const { frontier } = shardedFrontier(namespace, 3, { maxPagesPerGroup: 2 });
    expect(await frontier.addSeeds(urls)).toMatchObject({ accepted: 20, overLimit: 10 });
  });

  describe('--max-pages over shards (each shard admits against its grant of the budget)', () => {
    /** URLs admitted in each shard, from the shards' own counters. */
    async function admittedPerShard(client: ReturnType<TestRedis['client']>, names: readonly string[]): Promise<number[]> {
      return Promise.all(names.map(async (name) => Number((await client.get(frontierKeys(name).admitted)) ?? 0)));
    }

    it('admits exactly the budget over all shards, in one batch and in later ones', async () => {
      const namespace = `shards-${randomUUID()}`;
      const { frontier, names, client } = shardedFrontier(namespace, 3, { maxPages: 7 });
      expect(await frontier.addSeeds(urls)).toMatchObject({ accepted: 7, overLimit: 23 });
      const perShard = await admittedPerShard(client, names);
      expect(perShard.reduce((sum, n) => sum + n, 0)).toBe(7);
      expect(await client.hget(frontierKeys(namespace).pageGrants, 'total')).toBe('7');
      // The budget is spent: a new URL in any shard is over it, a known one is still a duplicate.
      expect(await frontier.addSeeds(['http://h0.test/new', 'http://h5.test/new', 'http://h9.test/new'])).toMatchObject({ accepted: 0, overLimit: 3 });
      expect(await frontier.addSeeds(urls.slice(0, 30))).toMatchObject({ accepted: 0, duplicate: 7, overLimit: 23 });
      expect(await releaseAll(frontier)).toBe(7);
    });

    it('with --max-pages-per-group too: a shard asks only for pages its groups can use, and the budget is met exactly', async () => {
      const namespace = `shards-${randomUUID()}`;
      const { frontier, names, client } = shardedFrontier(namespace, 3, { maxPages: 6, maxPagesPerGroup: 2 });
      // One big site first: 10 new URLs, of which its group may take only 2.
      const big = Array.from({ length: 10 }, (_, i) => `http://h0.test/big${i}`);
      expect(await frontier.addSeeds(big)).toMatchObject({ accepted: 2, overLimit: 8 });
      expect(await client.hget(frontierKeys(namespace).pageGrants, 'total')).toBe('2');
      // The rest of the budget is still there for groups of the other shards.
      const others = hosts.filter((host) => shardOfGroup(host, 3) !== shardOfGroup('h0.test', 3)).flatMap((host) => [`http://${host}/a`, `http://${host}/b`]);
      expect(others.length).toBeGreaterThanOrEqual(4);
      expect(await frontier.addSeeds(others)).toMatchObject({ accepted: 4 });
      expect((await admittedPerShard(client, names)).reduce((sum, n) => sum + n, 0)).toBe(6);
    });

    it('holds when processes admit into the same shards at once: exactly the budget, never more', async () => {
      const namespace = `shards-${randomUUID()}`;
      const many = Array.from({ length: 40 }, (_, i) => `h${i % 10}.test`).flatMap((host, i) => [`http://${host}/q${i}a`, `http://${host}/q${i}b`]);
      const processes = [0, 1, 2, 3].map(() => shardedFrontier(namespace, 3, { maxPages: 33 }));
      // Each process adds a different quarter of the URLs, in batches of 5, all at once.
      const results = await Promise.all(
        processes.map(async ({ frontier }, p) => {
          let accepted = 0;
          const mine = many.filter((_, i) => i % 4 === p);
          for (let at = 0; at < mine.length; at += 5) accepted += (await frontier.addDiscovered(mine.slice(at, at + 5), 0)).accepted;
          return accepted;
        }),
      );
      expect(results.reduce((sum, n) => sum + n, 0)).toBe(33);
      const [first] = processes;
      expect((await admittedPerShard(first!.client, first!.names)).reduce((sum, n) => sum + n, 0)).toBe(33);
    });

    it('a grant whose process died before storing it in its shard is not lost: the shard takes it later', async () => {
      const namespace = `shards-${randomUUID()}`;
      const { frontier, names, client } = shardedFrontier(namespace, 3, { maxPages: 5 });
      const shard = shardOfGroup('h0.test', 3);
      // A process was granted the whole budget for this shard, then died before admitting anything.
      expect(await grantPagesScript.run(client, [frontierKeys(namespace).pageGrants], [shard, 5, 5])).toEqual([5, 5]);
      const sameShard = hosts.filter((host) => shardOfGroup(host, 3) === shard).flatMap((host) => [1, 2, 3, 4, 5, 6].map((page) => `http://${host}/x${page}`));
      expect(sameShard.length).toBeGreaterThan(5);
      expect(await frontier.addSeeds(sameShard)).toMatchObject({ accepted: 5, overLimit: sameShard.length - 5 });
      expect(await admittedPerShard(client, names)).toEqual(names.map((_, i) => (i === shard ? 5 : 0)));
    });
  });

  it('refuses a second layout for a crawl that recorded one', async () => {
    const namespace = `shards-${randomUUID()}`;
    const { frontier, client } = shardedFrontier(namespace, 3);
    await frontier.addSeeds(urls.slice(0, 1));
    await expect(recordShardCount(client, namespace, 4)).rejects.toThrow(FrontierError);
    await expect(recordShardCount(client, namespace, 4)).rejects.toThrow('spread over 3 shards, not 4');
    await expect(recordShardCount(client, namespace, 3)).resolves.toBeUndefined();
  });
});
