import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCrawl, defineCrawler } from '@crawlq/crawler';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCatalogueSite } from './support/catalogue-site.js';

let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => redis.stop());

const catalogue = defineCrawler<{ url: string; price: number }>()({
  name: 'embedded-catalogue',
  routes: {
    list: async ({ $, enqueue }) => {
      await enqueue($('a.product').map((_, a) => $(a).attr('href')), { label: 'product' });
      await enqueue($('a.next').attr('href'), { label: 'list' });
    },
    product: async ({ $, request, push }) => {
      await push({ url: request.url, price: Number($('.price').text()) });
    },
  },
  defaultRoute: 'list',
  beforeRequest: ({ cookies }) => {
    cookies.session = 'embedded';
  },
});

describe('createCrawl: crawlq inside the user\'s own process', () => {
  it('enqueues, pauses and resumes a group, runs a worker here and reads the status', { timeout: 180_000 }, async () => {
    const site = await startCatalogueSite({ host: '127.0.0.64', pages: 3, productsPerPage: 4 });
    const out = join(mkdtempSync(join(tmpdir(), 'crawlq-embedded-')), 'items.jsonl');
    const crawl = await createCrawl({
      redisUrl: redis.url,
      namespace: 'embedded',
      crawler: catalogue,
      options: { allowPrivateNetwork: true, maxDepth: 20, rate: 'none', out, stateDir: join(out, '..') },
    });
    try {
      const seeded = await crawl.enqueue([`${site.origin}/list/1`]);
      expect(seeded.accepted).toBe(1);
      const group = new URL(site.origin).host;
      await crawl.pauseGroup(group, 60_000);
      const worker = await crawl.runWorker();
      // Paused: the worker takes the job but the gate defers it; nothing reaches the server.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(site.requests.filter((request) => request.path !== '/robots.txt')).toEqual([]);
      await crawl.resumeGroup(group);
      const status = await crawl.waitUntilDone();
      expect(status.done).toBe(true);
      await worker.stop();
      const urls = readFileSync(out, 'utf8').split('\n').filter((line) => line !== '').map((line) => (JSON.parse(line) as { url: string }).url);
      expect(urls.sort()).toEqual(site.productIds.map((id) => `${site.origin}/product/${id}`).sort());
    } finally {
      await crawl.close();
      await site.close();
    }
  });
});
