import { mkdtempSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCatalogueSite } from './support/catalogue-site.js';
import { exited } from './support/cli.js';
import { Fleet } from './support/fleet.js';
import { duplicates } from './support/records.js';

const CRAWLER = fileURLToPath(new URL('./fixtures/slow-product-crawler.ts', import.meta.url));
let redis: TestRedis;

beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => redis.stop());

describe('a crawler worker killed mid-handler', () => {
  it('kill -9: no item lost, none pushed twice beyond the jobs in flight', { timeout: 240_000 }, async () => {
    const site = await startCatalogueSite({ host: '127.0.0.63', pages: 4, productsPerPage: 5 });
    const concurrency = 4;
    const fleet = new Fleet({
      redisUrl: redis.url,
      dir: mkdtempSync(join(tmpdir(), 'crawlq-crawler-kill-')),
      flags: ['--namespace', 'crawler-kill', '--crawler', CRAWLER, '--allow-private-network', '--max-depth', '20', '--rate', 'none', '--domain-concurrency', '4', '--concurrency', String(concurrency), '--stall-timeout', '3s'],
    });
    try {
      const victim = await fleet.start();
      await fleet.cli(['enqueue', `${site.origin}/list/1`]);
      // Product pages fetched: their routes are in their 1.5 s after push.
      await waitFor(() => (site.requests.filter((request) => request.path.startsWith('/product/')).length >= 3 ? true : undefined), { what: 'product pages in hand', timeoutMs: 90_000 });
      victim.kill('SIGKILL');
      await exited(victim);
      const killedAt = Date.now();
      await fleet.start();
      await fleet.waitUntilDone(180_000);
      const items = fleet
        .resultFiles()
        .filter((file) => existsSync(file))
        .flatMap((file) => readFileSync(file, 'utf8').split('\n').filter((line) => line !== ''))
        .map((line) => JSON.parse(line) as { url: string; price: number });
      const urls = items.map((item) => item.url);
      // None lost.
      expect(new Set(urls)).toEqual(new Set(site.productIds.map((id) => `${site.origin}/product/${id}`)));
      // Pushed twice only for a job whose items were written just before the kill, before it completed.
      expect(duplicates(urls).length).toBeLessThanOrEqual(concurrency);
      // The kill did land mid-handler: pages fetched before it were fetched again after it (their items were not written).
      const fetchedBefore = new Set(site.requests.filter((request) => request.startedAt < killedAt && request.path.startsWith('/product/')).map((request) => request.path));
      const again = site.requests.filter((request) => request.startedAt >= killedAt && fetchedBefore.has(request.path));
      expect(again.length).toBeGreaterThan(0);
    } finally {
      await fleet.stop();
      await site.close();
    }
  });
});
