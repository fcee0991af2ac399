import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { openCrawlQueue, type CrawlQueue } from '@crawlq/queue';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Frontier, enqueueLines, type FrontierSettings, type RejectedUrl } from '../src/index.js';

let redis: TestRedis;
let queue: CrawlQueue;
let namespace: string;
const planned: string[][] = [];

const baseSettings: FrontierSettings = {
  scope: 'host',
  include: [],
  exclude: [],
  maxDepth: 2,
  groupBy: 'host',
  sortQuery: false,
  jobPolicy: { attempts: 3, backoffMs: 100 },
};

function frontier(settings: Partial<FrontierSettings> = {}): Frontier {
  return new Frontier({
    redis: redis.client(),
    queue,
    namespace,
    settings: { ...baseSettings, ...settings },
    planner: {
      plan(groups) {
        planned.push([...groups]);
        return Promise.resolve(groups.map((group) => (group === 'slow.test' ? 60_000 : 0)));
      },
    },
  });
}

async function queuedUrls(): Promise<string[]> {
  const jobs = await queue.getJobs(['waiting', 'delayed', 'prioritized']);
  return jobs.map((job) => job.data.url).sort();
}

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await queue.close();
  await redis.stop();
});
beforeEach(async () => {
  if (queue) await queue.close();
  namespace = `test-${randomUUID()}`;
  queue = openCrawlQueue({ url: redis.url }, namespace);
  planned.length = 0;
});

describe('Frontier', () => {
  it('normalises, dedupes across spellings and batches, and reports rejects by position', async () => {
    const f = frontier();
    const result = await f.addSeeds([
      'HTTP://A.test:80/x#frag',
      'http://a.test/x',
      '',
      'ftp://a.test/',
      'http://[bad',
      'http://b.test/?utm_source=x',
    ]);
    expect(result.accepted).toBe(2);
    expect(result.duplicate).toBe(1);
    expect(result.rejected.map((r: RejectedUrl) => [r.index, r.reason])).toEqual([
      [2, 'empty'],
      [3, 'scheme'],
      [4, 'malformed'],
    ]);
    const again = await f.addSeeds(['http://a.test/x']);
    expect(again).toMatchObject({ accepted: 0, duplicate: 1 });
    expect(await queuedUrls()).toEqual(['http://a.test/x', 'http://b.test/']);
  });

  it('uses the fingerprint as job id and the planner delay per job', async () => {
    const f = frontier();
    await f.addSeeds(['http://fast.test/', 'http://slow.test/']);
    const delayed = await queue.getJobs(['delayed']);
    expect(delayed.map((job) => job.data.url)).toEqual(['http://slow.test/']);
    expect(delayed[0]?.id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(planned).toEqual([['fast.test', 'slow.test']]);
  });

  it('keeps discovered links within host scope and depth', async () => {
    const f = frontier();
    await f.addSeeds(['http://a.test/']);
    const found = await f.addDiscovered(['http://a.test/1', '/2', 'http://other.test/', 'mailto:x@y'], 0);
    // Relative links must be absolute by now (the extractor resolves them).
    expect(found.accepted).toBe(1);
    expect(found.outOfScope).toBe(1);
    expect(found.rejected).toHaveLength(2);
    const deep = await f.addDiscovered(['http://a.test/deep'], 2);
    expect(deep).toMatchObject({ accepted: 0, tooDeep: 1 });
    const job = (await queue.getJobs(['waiting', 'prioritized'])).find((j) => j.data.url === 'http://a.test/1');
    expect(job?.data).toEqual({ url: 'http://a.test/1', depth: 1, group: 'a.test' });
  });

  it('shares the scope with another frontier instance (another worker)', async () => {
    await frontier().addSeeds(['http://a.test/']);
    const worker = frontier();
    expect((await worker.addDiscovered(['http://a.test/p', 'http://z.test/'], 0)).accepted).toBe(1);
  });

  it('stops at --max-pages and --max-pages-per-group', async () => {
    const f = frontier({ maxPages: 3, maxPagesPerGroup: 2, scope: 'any' });
    const result = await f.addSeeds(['http://a.test/1', 'http://a.test/2', 'http://a.test/3', 'http://b.test/1', 'http://c.test/1']);
    expect(result.accepted).toBe(3);
    expect(result.overLimit).toBe(2);
    expect(await queuedUrls()).toEqual(['http://a.test/1', 'http://a.test/2', 'http://b.test/1']);
  });
});

describe('enqueueLines', () => {
  it('streams lines in batches and reports rejected line numbers', async () => {
    const lines = ['http://a.test/1', 'not a url', 'http://a.test/1', '', 'http://a.test/2'];
    const source = createInterface({ input: Readable.from([lines.join('\n')]) });
    const rejectedLines: number[] = [];
    const totals = await enqueueLines(frontier(), source, { batchSize: 2, onRejected: (line) => rejectedLines.push(line) });
    expect(totals).toMatchObject({ accepted: 2, duplicate: 1, rejected: 2, lines: 5 });
    expect(rejectedLines).toEqual([2, 4]);
  });
});

describe('custom group rules', () => {
  it('puts hosts matching a rule in the named group, first match wins, others by host', async () => {
    const f = frontier({
      scope: 'any',
      groupRules: [
        { match: '*.cdn.test', group: 'shared-cdn' },
        { match: '*.test', group: 'never-reached-for-cdn' },
      ],
    });
    await f.addSeeds(['http://a.cdn.test/1', 'http://b.cdn.test/2', 'http://plain.example/3']);
    const jobs = await queue.getJobs(['waiting', 'prioritized', 'delayed']);
    const groups = Object.fromEntries(jobs.map((job) => [job.data.url, job.data.group]));
    expect(groups).toEqual({
      'http://a.cdn.test/1': 'shared-cdn',
      'http://b.cdn.test/2': 'shared-cdn',
      'http://plain.example/3': 'plain.example',
    });
    expect(f.groupOf('http://x.cdn.test/')).toBe('shared-cdn');
  });
});
