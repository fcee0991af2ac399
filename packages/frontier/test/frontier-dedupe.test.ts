import { randomUUID } from 'node:crypto';
import { openCrawlQueue, type CrawlQueue } from '@crawlq/queue';
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

/** A frontier on its own connection and queue client, as in another worker process. */
function worker(namespace: string, seenSet: SeenSetMode): { frontier: Frontier; queue: CrawlQueue } {
  const queue = openCrawlQueue({ url: redis.url }, namespace);
  queues.push(queue);
  const client = redis.client();
  const frontier = new Frontier({ redis: client, queue, namespace, settings: { ...settings, seenSet }, pacer: testPacer(client, namespace) });
  return { frontier, queue };
}

async function queuedUrls(queue: CrawlQueue, frontier?: Frontier): Promise<string[]> {
  if (frontier) await releaseAll(frontier);
  const jobs = await queue.getJobs(['waiting', 'delayed', 'prioritized']);
  return jobs.map((job) => job.data.url).sort();
}

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
