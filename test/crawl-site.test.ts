import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './support/cli.js';
import { duplicates, readRecords } from './support/records.js';

let redis: TestRedis;
let site: DemoSite;
const HOSTS = ['127.0.0.2', '127.0.0.3', '127.0.0.4'];

beforeAll(async () => {
  redis = await startTestRedis();
  site = await startDemoSite({ hosts: HOSTS, pagesPerHost: 40, linksPerPage: 4, crossHostLinksPerPage: 1, brokenLinksPerPage: 1 });
});
afterAll(async () => {
  await site.close();
  await redis.stop();
});

// Depth is the distance at which a URL was first discovered. The crawl runs
// breadth-first (BullMQ priority by depth); one job at a time makes that exact,
// so the found set must equal the shortest-path ground truth. Concurrent
// crawls are checked without a depth limit in multi-worker.test.ts.
function crawlArgs(out: string, namespace: string, extra: string[]): string[] {
  return ['--out', out, '--namespace', namespace, '--allow-private-network', '--rate', 'none', '--domain-concurrency', '8', '--concurrency', '1', '--attempts', '2', '--backoff', '100ms', ...extra];
}

describe('crawlq crawl on a generated multi-host site', () => {
  it.each([
    { scope: 'host', maxDepth: 2 },
    { scope: 'any', maxDepth: 3 },
  ] as const)('finds exactly the pages reachable within scope $scope and depth $maxDepth, each once', async ({ scope, maxDepth }) => {
    site.resetRecords();
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-e2e-'));
    const out = join(dir, 'results.jsonl');
    const seed = site.seeds[0] ?? '';
    const result = await runCli(['crawl', seed, ...crawlArgs(out, `e2e-${scope}`, ['--scope', scope, '--max-depth', String(maxDepth), '--state-dir', dir])], {
      env: cliEnv(redis.url),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('crawl finished');

    const expected = site.reachable({ seeds: [seed], maxDepth, scope });
    const records = readRecords(out);
    const urls = records.map((record) => record.url);
    expect(duplicates(urls)).toEqual([]);
    expect(new Set(urls)).toEqual(expected);
    // The summary counts every page, the last ones included (workers flush their counts as they stop).
    expect(result.stdout).toMatch(new RegExp(`\\n  pages +${records.length} in `));
    // Fetched once each at the server too (robots.txt aside).
    const served = site.requests.filter((request) => request.path !== '/robots.txt');
    expect(served).toHaveLength(expected.size);

    for (const record of records) {
      expect(record).toMatchObject({
        url: expect.any(String),
        finalUrl: expect.any(String),
        status: expect.any(Number),
        depth: expect.any(Number),
        attempts: 1,
        timings: { waitMs: expect.any(Number), fetchMs: expect.any(Number), parseMs: expect.any(Number) },
      });
      expect(Array.isArray(record.links)).toBe(true);
      expect(Number.isNaN(Date.parse(record.fetchedAt))).toBe(false);
      expect(record.depth).toBeLessThanOrEqual(maxDepth);
      if (record.url.includes('/missing/')) {
        expect(record.status).toBe(404);
      } else {
        expect(record.status).toBe(200);
        expect(record.title).toMatch(/^Page \d+ on 127\.0\.0\.\d$/);
        expect(record.contentType).toMatch(/text\/html/);
      }
    }
    const status = await runCli(['status', '--json', '--namespace', `e2e-${scope}`], { env: cliEnv(redis.url) });
    expect(JSON.parse(status.stdout)).toMatchObject({ waiting: 0, delayed: 0, active: 0, done: true, completed: expected.size });
  });
});
