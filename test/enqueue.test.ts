import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readBacklogEntries } from '@crawlq/frontier';
import { startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { Queue } from 'bullmq';
import { crawlJobUnits, type CrawlJobData } from '@crawlq/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { cliEnv, exited, runCli, startCli } from './support/cli.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => redis.stop());

/** URLs enqueued: waiting in the backlogs (no worker runs here to release them) or already jobs. */
async function queuedUrls(namespace: string): Promise<string[]> {
  const queue = new Queue('crawl', { connection: { url: redis.url }, prefix: `{${namespace}}` });
  const client = redis.client();
  try {
    const jobs = await queue.getJobs(['waiting', 'prioritized', 'delayed']);
    const backlog = await readBacklogEntries(client, namespace);
    return [...jobs.flatMap((job) => crawlJobUnits(String(job.id), job.data as CrawlJobData).map((unit) => unit.url)), ...backlog.map((entry) => entry.url)].sort();
  } finally {
    client.disconnect();
    await queue.close();
  }
}

describe('crawlq enqueue', () => {
  it('rejects bad lines with their line numbers, accepts IDN hosts, counts duplicates', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crawlq-enqueue-'));
    const file = join(dir, 'seeds.txt');
    const lines = [
      'http://example.test/a', // 1
      '', // 2 empty
      'ftp://example.test/file', // 3 bad scheme
      'http://exa mple.test/', // 4 malformed
      `http://example.test/${'x'.repeat(3000)}`, // 5 over-long
      'http://Bücher.example/straße', // 6 IDN
      'HTTP://EXAMPLE.test:80/a#top', // 7 duplicate of 1
      'javascript:alert(1)', // 8 bad scheme
    ];
    writeFileSync(file, `${lines.join('\n')}\n`);
    const result = await runCli(['enqueue', '--file', file, '--namespace', 'enqueue-file'], { env: cliEnv(redis.url) });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('accepted 2, duplicate 1, rejected 5');
    expect(result.stderr).toMatch(/^line 2: rejected \(empty\)/m);
    expect(result.stderr).toMatch(/^line 3: rejected \(scheme\)/m);
    expect(result.stderr).toMatch(/^line 4: rejected \(malformed\)/m);
    expect(result.stderr).toMatch(/^line 5: rejected \(too-long\)/m);
    expect(result.stderr).toMatch(/^line 8: rejected \(scheme\)/m);
    expect(result.stderr).not.toMatch(/^line (1|6|7):/m);
    expect(await queuedUrls('enqueue-file')).toEqual(['http://example.test/a', 'http://xn--bcher-kva.example/stra%C3%9Fe']);
  });

  it('reads standard input with --file - and dedupes against earlier runs', async () => {
    const env = cliEnv(redis.url);
    const first = await runCli(['enqueue', '--file', '-', '--namespace', 'enqueue-stdin'], { env, input: 'http://a.test/1\nhttp://a.test/2\n' });
    expect(first.stdout).toContain('accepted 2, duplicate 0, rejected 0');
    const second = await runCli(['enqueue', 'http://a.test/2', 'http://a.test/3', '--namespace', 'enqueue-stdin'], { env });
    expect(second.stdout).toContain('accepted 1, duplicate 1, rejected 0');
    // --json: the same totals for scripts; rejected lines still on stderr.
    const json = await runCli(['enqueue', 'http://a.test/3', 'http://a.test/4', 'ftp://a.test/', '--namespace', 'enqueue-stdin', '--json'], { env });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ accepted: 1, duplicate: 1, rejected: 1, overLimit: 0 });
    expect(json.stderr).toMatch(/^line 3: rejected \(scheme\)/m);
  });

  it('fails with exit code 2 and names the option on a bad value', async () => {
    const result = await runCli(['enqueue', 'http://a.test/', '--max-depth', 'deep'], { env: cliEnv(redis.url) });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('--max-depth');
  });

  it('warns, on enqueue and in every worker, when Redis may evict keys (queued jobs would vanish)', { timeout: 120_000 }, async () => {
    const admin = new Redis(redis.url);
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    try {
      const enqueued = await runCli(['enqueue', 'http://example.test/evict', '--namespace', 'enqueue-evict'], { env: cliEnv(redis.url) });
      expect(enqueued.code).toBe(0);
      expect(enqueued.stderr).toMatch(/warning: Redis maxmemory-policy is "allkeys-lru"; set it to "noeviction"/);

      const out = join(mkdtempSync(join(tmpdir(), 'crawlq-evict-')), 'out.jsonl');
      const worker = startCli(['worker', '--namespace', 'enqueue-evict', '--out', out], { env: cliEnv(redis.url) });
      // The worker logs JSON lines (stderr is not a terminal), so the quotes come escaped.
      let stderr = '';
      worker.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      try {
        await waitFor(() => (/maxmemory-policy is \\?"allkeys-lru/.test(stderr) ? true : undefined), { timeoutMs: 60_000, what: 'the worker\'s eviction warning' });
      } finally {
        worker.kill('SIGTERM');
        await exited(worker);
      }

      // With noeviction (the default) nothing is said.
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      const quiet = await runCli(['enqueue', 'http://example.test/quiet', '--namespace', 'enqueue-evict'], { env: cliEnv(redis.url) });
      expect(quiet.code).toBe(0);
      expect(quiet.stderr).not.toMatch(/maxmemory-policy/);
    } finally {
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      admin.disconnect();
    }
  });
});
