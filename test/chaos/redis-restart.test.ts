import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, startCapturedCli } from '../support/cli.js';
import { duplicates, expectEveryPageOnce, readRecords } from '../support/records.js';

// `crawl --workers 2` on an external Redis with AOF keeps going
// when that Redis is stopped and started again 5 s later on the same port and
// directory, and finishes with every page, each fetched and written exactly once.
let site: DemoSite;
let redis: TestRedis;

beforeAll(async () => {
  site = await startDemoSite({ hosts: ['127.0.0.2', '127.0.0.3'], pagesPerHost: 100, linksPerPage: 4 });
  redis = await startTestRedis({ appendOnly: true });
});
afterAll(async () => {
  await redis.stop();
  await site.close();
});

describe('a Redis restart under crawl --workers 2', () => {
  it('the crawl rides through it and finishes with every page exactly once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-restart-'));
    const out = join(dir, 'results.jsonl');
    const { output, exited } = startCapturedCli(
      ['crawl', ...site.seeds, '--out', out, '--namespace', 'restart', '--allow-private-network', '--rate', '10/1s', '--max-depth', '1000', '--workers', '2', '--concurrency', '4', '--state-dir', dir],
      { env: cliEnv(redis.url) },
    );

    await waitFor(() => (readRecords(out).length >= 30 ? true : undefined), { timeoutMs: 180_000, what: 'the first pages' });
    await redis.halt(); // A clean stop: the AOF is flushed, as an operator's restart would.
    const pagesAtStop = readRecords(out).length;
    await sleep(5_000);
    await redis.start();

    const code = await exited;

    const { stderr, stdout } = output;
    expect(stderr).not.toContain('max retries per request');
    expect(code, stderr).toBe(0);
    // Said once for the outage, not once per failed reconnect.
    expect(stderr.match(/lost the connection to Redis/g)).toHaveLength(1);
    const { expected, urls } = expectEveryPageOnce(site, out, { pagesAtStop, stderr, stdout });
    process.stdout.write(`redis restart: ${pagesAtStop} of ${expected.size} pages before the stop, ${duplicates(urls).length} written twice\n`);
  }, 420_000);
});
