import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { crawlJobUnits, openCrawlQueue } from '@crawlq/queue';
import { startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exited } from '../support/cli.js';
import { Fleet } from '../support/fleet.js';
import { duplicates, readRecords } from '../support/records.js';

// The fleet's page counter (`status`'s `completed`) against the records a
// crawl wrote, after a kill -9 of one of two workers mid-crawl.
//
// What a kill may leave uncounted: a worker counts a page after its record
// is written and before its job goes on, so of each job the killed worker
// had in flight, at most the URL in hand (written, count not yet in Redis).
// Jobs carry several URLs here (a group with many waiting URLs is released as
// jobs of up to 32), but a job fetches them one after another, so that is one
// URL per job, and a worker holds at most --concurrency jobs. The job's next
// worker starts at that same URL, so it may also be written twice. Hence,
// with J the killed worker's jobs in flight (J <= --concurrency):
//   0 <= lines - completed <= J,   0 <= lines - distinct URLs <= J.
const CONCURRENCY = 8;
const HOSTS = ['127.0.0.71', '127.0.0.72'];
const PAGES_PER_HOST = 200;

let redis: TestRedis;
let site: DemoSite;

beforeAll(async () => {
  redis = await startTestRedis();
  site = await startDemoSite({ hosts: HOSTS, pagesPerHost: PAGES_PER_HOST, linksPerPage: 0 });
  // Short requests: many pages a second, so a kill lands among them.
  site.setFaults([{ status: 200, delayMs: 20 }]);
});
afterAll(async () => {
  await site.close();
  await redis.stop();
});

describe('page counters after a kill -9', () => {
  it('status counts every page written but at most one URL per job the killed worker had in flight', { timeout: 240_000 }, async () => {
    const namespace = 'counters-kill';
    const fleet = new Fleet({
      redisUrl: redis.url,
      dir: mkdtempSync(join(tmpdir(), 'crawlq-counters-kill-')),
      flags: [
        '--namespace', namespace, '--allow-private-network', '--concurrency', String(CONCURRENCY), '--max-depth', '0', '--rate', 'none',
        '--domain-concurrency', String(CONCURRENCY), '--lease-time', '6s', '--stall-timeout', '4s', '--request-timeout', '5s', '--ignore-robots',
      ],
    });
    try {
      const victim = await fleet.start();
      await fleet.start();
      const seeds = HOSTS.flatMap((host) => Array.from({ length: PAGES_PER_HOST }, (_, i) => site.urlOf(host, i)));
      const enqueued = await fleet.cli(['enqueue', ...seeds]);
      expect(enqueued.code, enqueued.stderr).toBe(0);
      const pages = () => site.requests.filter((request) => !request.path.startsWith('/robots.txt'));
      await waitFor(() => (pages().length >= 120 ? true : undefined), { timeoutMs: 120_000, intervalMs: 20, what: '120 page requests' });
      victim.kill('SIGKILL');
      await exited(victim);
      // Listed at once: BullMQ hands the dead worker's jobs over only after --stall-timeout.
      const queue = openCrawlQueue({ url: redis.url }, namespace);
      const active = await queue.getJobs(['active']);
      await queue.close();
      // Of each, the URL in hand: the one its progress names (a job of several records each it moves on to).
      const inHand = new Set(active.map((job) => {
        const units = crawlJobUnits(String(job.id), job.data);
        return (units[typeof job.progress === 'number' ? job.progress : 0] ?? units[0])?.url;
      }));
      await fleet.waitUntilDone(180_000);

      const status = await fleet.status();
      const written = fleet.resultFiles().flatMap((file) => readRecords(file)).filter((record) => !('skipped' in record));
      const lines = written.length;
      const distinct = new Set(written.map((record) => record.url)).size;
      console.info(`kill -9 of one of two workers: ${lines} page lines, ${distinct} distinct URLs, status completed ${status.completed}; ${active.length} jobs active just after the kill (both workers), ${active.filter((job) => job.data.batch !== undefined).length} of several URLs`);
      expect(distinct).toBe(seeds.length);
      expect(lines - status.completed).toBeGreaterThanOrEqual(0);
      expect(lines - status.completed).toBeLessThanOrEqual(CONCURRENCY);
      expect(lines - distinct).toBeLessThanOrEqual(CONCURRENCY);
      // Written twice: only a URL a job had in hand at the kill.
      expect(duplicates(written.map((record) => record.url)).filter((url) => !inHand.has(url))).toEqual([]);
      expect(Math.abs(status.completed - distinct)).toBeLessThanOrEqual(CONCURRENCY);
    } finally {
      await fleet.stop();
    }
  });
});
