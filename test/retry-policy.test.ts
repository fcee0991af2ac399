import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { startTestRedis, type TestRedis } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './support/cli.js';
import { readRecords } from './support/records.js';

let redis: TestRedis;
let site: DemoSite;
const [A, B] = ['127.0.0.8', '127.0.0.9'];

beforeAll(async () => {
  redis = await startTestRedis();
  site = await startDemoSite({ hosts: [A, B], pagesPerHost: 10, linksPerPage: 1 });
});
afterAll(async () => {
  await site.close();
  await redis.stop();
});

async function crawl(seeds: string[], extra: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'crawlq-retry-'));
  const out = join(dir, 'out.jsonl');
  const namespace = `retry-${Math.random().toString(36).slice(2)}`;
  const result = await runCli(
    ['crawl', ...seeds, '--out', out, '--namespace', namespace, '--allow-private-network', '--max-depth', '0', '--rate', 'none', '--backoff', '200ms', ...extra],
    { env: cliEnv(redis.url) },
  );
  expect(result.code, result.stderr).toBe(0);
  return { records: readRecords(out), result, namespace };
}

describe('retry policy against a fault-injecting server', () => {
  it("503 then 200: got's own retry succeeds within one attempt", async () => {
    site.resetRecords();
    site.setFaults([{ host: A, path: '/p/1', status: 503, times: 1 }]);
    const url = site.urlOf(A, 1);
    const { records } = await crawl([url], ['--fetch-retries', '2', '--fetch-backoff', '50ms']);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ url, status: 200, attempts: 1, retries: 1 });
    expect(site.requestCount(url)).toBe(2);
  });

  it('503 then 200 with got retries off: the second queue attempt succeeds', async () => {
    site.resetRecords();
    site.setFaults([{ host: A, path: '/p/2', status: 503, times: 1 }]);
    const url = site.urlOf(A, 2);
    const { records } = await crawl([url], ['--fetch-retries', '0', '--attempts', '3']);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ url, status: 200, attempts: 2, retries: 0 });
    expect(site.requestCount(url)).toBe(2);
  });

  it('404 is a result: fetched once, recorded, not dead-lettered', async () => {
    site.resetRecords();
    site.setFaults([]);
    const url = `http://${A}:${site.port}/missing/1`;
    const { records, namespace } = await crawl([url], ['--attempts', '3']);
    expect(records).toMatchObject([{ url, status: 404, attempts: 1, retries: 0 }]);
    expect(site.requestCount(url)).toBe(1);
    const status = await runCli(['status', '--json', '--namespace', namespace], { env: cliEnv(redis.url) });
    expect(JSON.parse(status.stdout)).toMatchObject({ deadLettered: 0, failed: 0 });
  });

  it('a hanging response times out and is retried', async () => {
    site.resetRecords();
    site.setFaults([{ host: A, path: '/p/3', status: 200, hang: true, times: 1 }]);
    const url = site.urlOf(A, 3);
    const { records } = await crawl([url], ['--response-timeout', '500ms', '--request-timeout', '2s', '--fetch-retries', '2', '--fetch-backoff', '50ms']);
    expect(records).toMatchObject([{ url, status: 200, retries: 1 }]);
    expect(site.requestCount(url)).toBe(2);
  });

  it('Retry-After is waited for, and the wait does not use an attempt', async () => {
    site.resetRecords();
    site.setFaults([{ host: B, path: '/p/1', status: 429, retryAfter: '2', times: 1 }]);
    const url = site.urlOf(B, 1);
    const { records } = await crawl([url], ['--attempts', '1']);
    expect(records).toMatchObject([{ url, status: 200, attempts: 1 }]);
    const times = site.requests.filter((request) => request.url === url).map((request) => request.startedAt);
    expect(times).toHaveLength(2);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(1_950);
  });
});
