import { randomUUID } from 'node:crypto';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrawlStatsRecorder, readCrawlStats, type PageRecord } from '../src/index.js';

let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis.stop();
});

function page(status: number, bytes: number): PageRecord {
  return {
    url: `http://a.test/${randomUUID()}`,
    finalUrl: 'http://a.test/',
    status,
    contentType: 'text/html',
    title: null,
    description: null,
    canonical: null,
    lang: null,
    links: [],
    depth: 0,
    group: 'a.test',
    requestedAt: new Date().toISOString(),
    fetchedAt: new Date().toISOString(),
    attempts: 1,
    retries: 0,
    bytes,
    timings: { waitMs: 0, fetchMs: 1, parseMs: 0 },
    enqueued: 0,
  };
}

describe('CrawlStatsRecorder (real Redis)', () => {
  it('page() resolves once the count is in Redis: a job that went on was counted, whatever kills its worker next', async () => {
    const namespace = `stats-${randomUUID()}`;
    const client = redis.client();
    const recorder = new CrawlStatsRecorder({ redis: client, namespace, onError: (error) => expect.fail(String(error)) });
    try {
      await recorder.page(page(200, 10));
      expect(await readCrawlStats(client, namespace)).toMatchObject({ pages: 1, bytes: 10, byStatus: { '2xx': 1 } });
      // Many at once (a busy worker): each resolves with its own count in, in fewer writes than pages.
      const writes = async () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await client.info('commandstats'))?.[1] ?? 0) + Number(/cmdstat_eval:calls=(\d+)/.exec(await client.info('commandstats'))?.[1] ?? 0);
      const writesBefore = await writes();
      const pending = Array.from({ length: 50 }, (_, i) => recorder.page(page(i % 2 === 0 ? 200 : 404, 1)));
      await recorder.skipped('robots');
      await Promise.all(pending);
      expect(await readCrawlStats(client, namespace)).toEqual({ pages: 51, bytes: 60, byStatus: { '2xx': 26, '4xx': 25 }, skipped: { robots: 1 } });
      expect((await writes()) - writesBefore).toBeLessThan(10);
    } finally {
      await recorder.close();
    }
  });
});
