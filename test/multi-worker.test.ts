import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, exited, runCli, startCli } from './support/cli.js';
import { StatusReader } from './support/crawl-status.js';
import { duplicates, readRecords } from './support/records.js';

let redis: TestRedis;
let site: DemoSite;

beforeAll(async () => {
  redis = await startTestRedis();
  site = await startDemoSite({ hosts: ['127.0.0.5', '127.0.0.6', '127.0.0.7'], pagesPerHost: 50, linksPerPage: 4, crossHostLinksPerPage: 1 });
});
afterAll(async () => {
  await site.close();
  await redis.stop();
});

describe('several `crawlq worker` processes on one Redis', () => {
  // The case's own bounds (90 s for the workers to start, 90 s for the crawl) sit inside its
  // timeout: on a loaded machine the slow step fails by name, not the default 60 s cut-off.
  it.each([2, 3])('%i workers finish one crawl together, every page fetched once', { timeout: 240_000 }, async (workers) => {
    site.resetRecords();
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-workers-'));
    const namespace = `multi-${workers}`;
    const common = ['--namespace', namespace, '--allow-private-network', '--rate', 'none', '--domain-concurrency', '4', '--scope', 'any', '--max-depth', '50'];
    const env = cliEnv(redis.url);
    // The definition first, then every worker up and waiting, then the seeds: a worker
    // that starts slowly (seconds on a loaded machine) would otherwise find the whole
    // crawl done by the others, and "each worker took part" would test start-up speed.
    const defined = await runCli(['config', 'set', ...common], { env });
    expect(defined.code, defined.stderr).toBe(0);
    const processes = Array.from({ length: workers }, (_, i) =>
      // More jobs in flight than the groups' caps allow: most of them wait at the gate.
      startCli(['worker', '--namespace', namespace, '--concurrency', '16', '--out', join(dir, `worker-${i}.jsonl`)], { env }),
    );
    const logs = processes.map(() => ({ text: '' }));
    processes.forEach((child, i) => child.stderr?.on('data', (chunk: Buffer) => (logs[i]!.text += chunk.toString())));
    try {
      await waitFor(() => (logs.every((log) => /started \(concurrency/.test(log.text)) ? true : undefined), {
        timeoutMs: 90_000,
        what: 'every worker to start',
      });
      const enqueued = await runCli(['enqueue', ...site.seeds, '--namespace', namespace], { env });
      expect(enqueued.code, enqueued.stderr).toBe(0);
      expect(enqueued.stdout).toContain(`accepted ${site.seeds.length}, duplicate 0, rejected 0`);
      // Read in this process, as `crawlq status` reads it: a command started every poll took CPU from the workers.
      const status = new StatusReader(redis.url, namespace);
      try {
        await waitFor(
          async () => {
            const parsed = await status.read();
            return parsed.done && parsed.completed > 0 ? parsed : undefined;
          },
          { timeoutMs: 90_000, intervalMs: 200, what: 'the crawl to finish' },
        );
      } finally {
        await status.close();
      }
    } finally {
      processes.forEach((child) => child.kill('SIGTERM'));
    }
    const codes = await Promise.all(processes.map((child) => exited(child)));
    expect(codes, logs.map((log) => log.text).join('\n')).toEqual(processes.map(() => 0));
    // Every line a worker wrote is a log record: no runtime warning (16 jobs listening to one stop signal once drew one).
    for (const log of logs) {
      for (const line of log.text.split('\n').filter((text) => text.trim() !== '')) expect(line).toMatch(/^\{"level":/);
    }

    const perWorker = processes.map((_, i) => readRecords(join(dir, `worker-${i}.jsonl`)));
    // Each worker took part.
    for (const records of perWorker) expect(records.length).toBeGreaterThan(0);
    const urls = perWorker.flat().map((record) => record.url);
    expect(duplicates(urls)).toEqual([]);
    const expected = site.reachable({ seeds: site.seeds, maxDepth: 50, scope: 'any' });
    expect(new Set(urls)).toEqual(expected);
    const pageRequests = site.requests.filter((request) => request.path !== '/robots.txt');
    expect(duplicates(pageRequests.map((request) => request.url))).toEqual([]);
  });
});
