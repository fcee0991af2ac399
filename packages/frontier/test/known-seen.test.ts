import { randomUUID } from 'node:crypto';
import { openCrawlQueue, type CrawlQueue } from '@crawlq/queue';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Frontier, type FrontierSettings } from '../src/index.js';
import { KnownSeen } from '../src/known-seen.js';
import { releaseAll, testPacer } from './support.js';

describe('KnownSeen', () => {
  it('holds what was added, at most its capacity, and keeps entries that are read', () => {
    const known = new KnownSeen(4);
    for (const fp of ['a', 'b']) known.add(fp);
    expect(known.has('a')).toBe(true);
    expect(known.has('z')).toBe(false);
    // 'c' starts a new generation: 'a' and 'b' are old, and 'a' is read back into the young one.
    known.add('c');
    expect(known.has('a')).toBe(true);
    known.add('d'); // the young generation (c, a) is full: it becomes the old one, 'b' is dropped
    expect(known.has('b')).toBe(false);
    expect(known.has('a')).toBe(true);
    expect(known.has('c')).toBe(true);
    for (let i = 0; i < 1000; i += 1) known.add(`x${i}`);
    expect(known.size).toBeLessThanOrEqual(4);
  });

  it('capacity 0 holds nothing', () => {
    const known = new KnownSeen(0);
    known.add('a');
    expect(known.has('a')).toBe(false);
    expect(known.size).toBe(0);
  });
});

let redis: TestRedis;
const queues: CrawlQueue[] = [];
beforeAll(async () => {
  redis = await startTestRedis();
});
afterEach(async () => {
  await Promise.all(queues.splice(0).map((queue) => queue.close()));
});
afterAll(async () => redis.stop());

const settings: FrontierSettings = { scope: 'any', include: [], exclude: [], maxDepth: 3, groupBy: 'host', sortQuery: false, jobPolicy: { attempts: 3, backoffMs: 100 } };

function frontierFor(namespace: string, options: { knownSeenCapacity?: number; maxPages?: number } = {}): { frontier: Frontier; queue: CrawlQueue } {
  const queue = openCrawlQueue({ url: redis.url }, namespace);
  queues.push(queue);
  const client = redis.client();
  const frontier = new Frontier({
    redis: client,
    queue,
    namespace,
    settings: { ...settings, maxPages: options.maxPages },
    pacer: testPacer(client, namespace),
    ...(options.knownSeenCapacity === undefined ? {} : { knownSeenCapacity: options.knownSeenCapacity }),
  });
  return { frontier, queue };
}

/** Scripts Redis has run so far (every admission is one). */
async function scriptCalls(): Promise<number> {
  const stats = await redis.client().info('commandstats');
  return [...stats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
}

describe('Frontier: links already confirmed seen', () => {
  it('are counted as duplicates without an admission in Redis; new links in the same batch still go there', async () => {
    const { frontier, queue } = frontierFor(`t-${randomUUID()}`);
    const links = ['http://a.test/1', 'http://a.test/2', 'http://b.test/1'];
    expect((await frontier.addDiscovered(links, 0)).accepted).toBe(3);
    const before = await scriptCalls();
    const again = await frontier.addDiscovered([...links, 'http://a.test/1#frag'], 1);
    expect(again).toMatchObject({ accepted: 0, duplicate: 4 });
    expect(await scriptCalls()).toBe(before);
    const mixed = await frontier.addDiscovered(['http://a.test/2', 'http://a.test/3'], 1);
    expect(mixed).toMatchObject({ accepted: 1, duplicate: 1, acceptedUrls: ['http://a.test/3'] });
    expect(await scriptCalls()).toBe(before + 1);
    expect(await releaseAll(frontier)).toBe(4);
    expect((await queue.getJobs(['prioritized', 'waiting'])).map((job) => job.data.url).sort()).toEqual(['http://a.test/1', 'http://a.test/2', 'http://a.test/3', 'http://b.test/1']);
  });

  it('a link another process admitted is learnt from Redis once, then held', async () => {
    const namespace = `t-${randomUUID()}`;
    const first = frontierFor(namespace).frontier;
    const second = frontierFor(namespace).frontier;
    await first.addDiscovered(['http://a.test/x'], 0);
    const before = await scriptCalls();
    expect(await second.addDiscovered(['http://a.test/x'], 0)).toMatchObject({ accepted: 0, duplicate: 1 });
    expect(await second.addDiscovered(['http://a.test/x'], 0)).toMatchObject({ accepted: 0, duplicate: 1 });
    expect(await scriptCalls()).toBe(before + 1);
  });

  it('a link refused for the page budget is not held: it is asked about again, and stays over the limit', async () => {
    const { frontier } = frontierFor(`t-${randomUUID()}`, { maxPages: 1 });
    expect(await frontier.addDiscovered(['http://a.test/1', 'http://a.test/2'], 0)).toMatchObject({ accepted: 1, overLimit: 1 });
    const before = await scriptCalls();
    expect(await frontier.addDiscovered(['http://a.test/2'], 0)).toMatchObject({ accepted: 0, overLimit: 1, duplicate: 0 });
    expect(await scriptCalls()).toBe(before + 1);
  });

  it('with knownSeenCapacity 0 every batch asks Redis', async () => {
    const { frontier } = frontierFor(`t-${randomUUID()}`, { knownSeenCapacity: 0 });
    await frontier.addDiscovered(['http://a.test/1'], 0);
    const before = await scriptCalls();
    expect(await frontier.addDiscovered(['http://a.test/1'], 0)).toMatchObject({ duplicate: 1 });
    expect(await scriptCalls()).toBe(before + 1);
  });
});
