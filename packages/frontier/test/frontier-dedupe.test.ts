import { randomUUID } from 'node:crypto';
import { crawlJobUnits, openCrawlQueue, type CrawlQueue } from '@crawlq/queue';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { InvalidUrlError, urlFingerprint } from '@crawlq/urls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Frontier, SeenSetMismatchError, frontierKeys, type FrontierSettings, type SeenSetMode } from '../src/index.js';
import { releaseAll, testPacer } from './support.js';

let redis: TestRedis;
const queues: CrawlQueue[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
});
afterEach(async () => {
  await Promise.all(queues.splice(0).map((queue) => queue.close()));
});
afterAll(async () => redis.stop());

const settings: FrontierSettings = {
  scope: 'any',
  include: [],
  exclude: [],
  maxDepth: 3,
  groupBy: 'host',
  sortQuery: false,
  jobPolicy: { attempts: 3, backoffMs: 100 },
};

/**
 * A frontier on its own connection and queue client, as in another worker
 * process, with its own memory of URLs known seen (see KnownSeen).
 */
function worker(namespace: string, seenSet: SeenSetMode, options: { knownSeenCapacity?: number; maxPages?: number } = {}): { frontier: Frontier; queue: CrawlQueue } {
  const queue = openCrawlQueue({ url: redis.url }, namespace);
  queues.push(queue);
  const client = redis.client();
  const frontier = new Frontier({
    redis: client,
    queue,
    namespace,
    settings: { ...settings, seenSet, maxPages: options.maxPages },
    pacer: testPacer(client, namespace),
    ...(options.knownSeenCapacity === undefined ? {} : { knownSeenCapacity: options.knownSeenCapacity }),
  });
  return { frontier, queue };
}

async function queuedUrls(queue: CrawlQueue, frontier?: Frontier): Promise<string[]> {
  if (frontier) await releaseAll(frontier);
  const jobs = await queue.getJobs(['waiting', 'delayed', 'prioritized']);
  return jobs.flatMap((job) => crawlJobUnits(String(job.id), job.data).map((unit) => unit.url)).sort();
}

const EXACT: SeenSetMode = { mode: 'exact' };

const modes: [string, SeenSetMode][] = [
  ['exact', { mode: 'exact' }],
  ['bloom', { mode: 'bloom', expectedUrls: 100_000, falsePositiveRate: 0.001 }],
];

describe.each(modes)('Frontier dedupe across instances (%s)', (_name, mode) => {
  it('two batches of one process admitting the same links at once accept each link once', async () => {
    const namespace = `t-${randomUUID()}`;
    const { frontier, queue } = worker(namespace, mode);
    const links = Array.from({ length: 50 }, (_, i) => `http://same.test/page/${i}`);
    // Both calls pass the seen-set check before either marks its links.
    const [first, second] = await Promise.all([frontier.addDiscovered(links, 0), frontier.addDiscovered([...links].reverse(), 0)]);
    expect(first.accepted + second.accepted).toBe(50);
    expect(first.duplicate + second.duplicate).toBe(50);
    expect(await queuedUrls(queue, frontier)).toHaveLength(50);
  });

  it('a URL admitted by one worker is a duplicate for another, in any spelling', async () => {
    const namespace = `t-${randomUUID()}`;
    const a = worker(namespace, mode);
    const b = worker(namespace, mode);
    const pages = Array.from({ length: 300 }, (_, i) => `http://site-${i % 7}.test/page/${i}`);
    expect((await a.frontier.addSeeds(pages.slice(0, 200))).accepted).toBe(200);
    const second = await b.frontier.addDiscovered(
      pages.slice(100).map((url) => url.replace('http://', 'HTTP://').replace('.test/', '.test:80/') + '#top'),
      0,
    );
    expect(second).toMatchObject({ accepted: 100, duplicate: 100 });
    const third = await a.frontier.addSeeds(pages);
    expect(third).toMatchObject({ accepted: 0, duplicate: 300 });
    expect(await queuedUrls(a.queue, a.frontier)).toEqual([...pages].sort());
    expect(await redis.client().exists(frontierKeys(namespace).seen)).toBe(1);
  });

  it('two workers enqueuing the same batch at once create each job once', async () => {
    const namespace = `t-${randomUUID()}`;
    const pages = Array.from({ length: 500 }, (_, i) => `http://race.test/${i}`);
    const [a, b] = [worker(namespace, mode), worker(namespace, mode)];
    await Promise.all([a.frontier.addSeeds(pages), b.frontier.addSeeds(pages)]);
    expect(await queuedUrls(a.queue, a.frontier)).toEqual([...pages].sort());
    // Both marked everything: a third attempt admits nothing.
    expect((await a.frontier.addSeeds(pages)).duplicate).toBe(500);
  });

  it('claim(): a redirect target is marked at once; already-seen targets are refused', async () => {
    const namespace = `t-${randomUUID()}`;
    const { frontier, queue } = worker(namespace, mode);
    await frontier.addSeeds(['http://a.test/start', 'http://a.test/known']);
    const owner = urlFingerprint('http://a.test/start');

    // Redirect to a page already enqueued: do not fetch it through the redirect.
    expect(await frontier.claim('http://a.test/known', owner)).toBe(false);
    // Redirect to a new page: fetch it now, and never enqueue it later.
    expect(await frontier.claim('HTTP://A.test:80/moved#x', owner)).toBe(true);
    expect(await worker(namespace, mode).frontier.addDiscovered(['http://a.test/moved'], 0)).toMatchObject({ accepted: 0, duplicate: 1 });
    expect(await queuedUrls(queue, frontier)).toEqual(['http://a.test/known', 'http://a.test/start']);

    // The same job again (deferred, or its worker died): still its page.
    expect(await frontier.claim('http://a.test/moved', owner)).toBe(true);
    // Another job redirected there too: already taken.
    expect(await frontier.claim('http://a.test/moved', urlFingerprint('http://a.test/other'))).toBe(false);
    expect(await frontier.claim('http://a.test/moved')).toBe(false);
    // A redirect back to the job's own URL (after normalisation) is the job's own page.
    expect(await frontier.claim('http://a.test/start?utm_source=x', owner)).toBe(true);
  });

  it('claim() of concurrent redirects to one page: exactly one wins', async () => {
    const namespace = `t-${randomUUID()}`;
    const workers = Array.from({ length: 5 }, () => worker(namespace, mode).frontier);
    const wins = await Promise.all(workers.map((f, i) => f.claim('http://b.test/landing', `job${i}`)));
    expect(wins.filter(Boolean)).toHaveLength(1);
  });

  it('claim() refuses a URL that cannot be crawled', async () => {
    const { frontier } = worker(`t-${randomUUID()}`, mode);
    await expect(frontier.claim('ftp://a.test/file')).rejects.toBeInstanceOf(InvalidUrlError);
  });
});

describe('Frontier seen-set modes', () => {
  it('refuses to resume an exact crawl in bloom mode', async () => {
    const namespace = `t-${randomUUID()}`;
    await worker(namespace, { mode: 'exact' }).frontier.addSeeds(['http://a.test/']);
    const bloom = worker(namespace, { mode: 'bloom', expectedUrls: 1000, falsePositiveRate: 0.01 });
    await expect(bloom.frontier.addSeeds(['http://a.test/2'])).rejects.toBeInstanceOf(SeenSetMismatchError);
    await expect(bloom.frontier.claim('http://a.test/3')).rejects.toBeInstanceOf(SeenSetMismatchError);
  });
});

/** Scripts Redis has run so far (every admission is one). */
async function scriptCalls(): Promise<number> {
  const stats = await redis.client().info('commandstats');
  return [...stats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
}

describe('Frontier: links already confirmed seen', () => {
  it('are counted as duplicates without an admission in Redis; new links in the same batch still go there', async () => {
    const { frontier, queue } = worker(`t-${randomUUID()}`, EXACT);
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
    const first = worker(namespace, EXACT).frontier;
    const second = worker(namespace, EXACT).frontier;
    await first.addDiscovered(['http://a.test/x'], 0);
    const before = await scriptCalls();
    expect(await second.addDiscovered(['http://a.test/x'], 0)).toMatchObject({ accepted: 0, duplicate: 1 });
    expect(await second.addDiscovered(['http://a.test/x'], 0)).toMatchObject({ accepted: 0, duplicate: 1 });
    expect(await scriptCalls()).toBe(before + 1);
  });

  it('a link refused for the page budget is not held: it is asked about again, and stays over the limit', async () => {
    const { frontier } = worker(`t-${randomUUID()}`, EXACT, { maxPages: 1 });
    expect(await frontier.addDiscovered(['http://a.test/1', 'http://a.test/2'], 0)).toMatchObject({ accepted: 1, overLimit: 1 });
    const before = await scriptCalls();
    expect(await frontier.addDiscovered(['http://a.test/2'], 0)).toMatchObject({ accepted: 0, overLimit: 1, duplicate: 0 });
    expect(await scriptCalls()).toBe(before + 1);
  });

  it('with knownSeenCapacity 0 every batch asks Redis', async () => {
    const { frontier } = worker(`t-${randomUUID()}`, EXACT, { knownSeenCapacity: 0 });
    await frontier.addDiscovered(['http://a.test/1'], 0);
    const before = await scriptCalls();
    expect(await frontier.addDiscovered(['http://a.test/1'], 0)).toMatchObject({ duplicate: 1 });
    expect(await scriptCalls()).toBe(before + 1);
  });
});
