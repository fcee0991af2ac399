import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDemoSite, type DemoSite } from '@crawlq/demo-site';
import { readCrawlProgress } from '@crawlq/frontier';
import { startTestRedis, type TestRedis, waitFor } from '@crawlq/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, exited, startCli } from '../support/cli.js';
import { descendantsOf, processTable } from '../support/processes.js';
import { duplicates, readRecords } from '../support/records.js';

// a crawl whose Redis is gone for longer than --redis-outage-limit
// stops cleanly with the resume hint (exit code 3), its workers with it; run
// again once Redis is back, it finishes. The Redis is external, with AOF, and
// is stopped mid-crawl and not started again within the limit.
//
// Caveat the resume assertions encode: jobs in flight when Redis went away
// stay active in Redis; on resume BullMQ's stalled-job check hands them out
// again, so a page whose request had gone out is fetched a second time. Every
// other page is fetched exactly once, so a crawl that was quiet at the stop
// (no job active) fetches every page exactly once.
let site: DemoSite;
let redis: TestRedis;
const SLOW_PATH = '/p/5';
const namespace = 'outage';
const dir = mkdtempSync(join(tmpdir(), 'crawlq-outage-'));
const out = join(dir, 'results.jsonl');

beforeAll(async () => {
  // A slow page, so that a request is under way when Redis goes away: its job is then in flight, and runs again on resume.
  site = await startDemoSite({ hosts: ['127.0.0.2', '127.0.0.3'], pagesPerHost: 60, linksPerPage: 4, slowPages: [{ path: SLOW_PATH, delayMs: 6_000 }] });
  redis = await startTestRedis({ appendOnly: true });
});
afterAll(async () => {
  await redis.stop();
  await site.close();
});

/** The same command both times: the second run resumes what the first left. */
function startCrawl(): { child: ChildProcess; output: { stderr: string; stdout: string } } {
  const child = startCli(
    [
      'crawl', ...site.seeds, '--out', out, '--namespace', namespace, '--allow-private-network', '--rate', '10/1s', '--max-depth', '1000',
      '--workers', '2', '--concurrency', '4', '--state-dir', dir, '--redis-outage-limit', '4s',
      // Short enough that the jobs and gate slots left by the stopped workers come back soon on resume.
      // The request timeout outlasts the slow page (6 s), or every request for it is cut off, retried
      // and dead-lettered (a dozen fetches); a lease is at least the request timeout.
      '--stall-timeout', '5s', '--lease-time', '12s', '--request-timeout', '12s',
    ],
    { env: cliEnv(redis.url) },
  );
  child.stdin?.end();
  const output = { stderr: '', stdout: '' };
  child.stdout?.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
  return { child, output };
}

const alive = (pid: number) => processTable().some((row) => row.pid === pid);
const STACK_FRAME = /^\s+at .+(:\d+:\d+\)?|\(native\)|<anonymous>\)?)$/m;
const CRAWL_STOPPED = /^crawlq: Redis unreachable for (\d+\.\d) s \(limit 4 s\); crawl stopped\. Run the same command again to resume\.$/gm;

let inFlightAtStop: number | undefined;

describe('Redis gone longer than --redis-outage-limit under crawl --workers 2', () => {
  it('crawl stops with exit code 3 and one line with the resume hint; no stack trace, no process left', async () => {
    const { child, output } = startCrawl();
    const pid = child.pid ?? -1;
    // Mid-crawl, with the slow page's request under way.
    const slowInFlight = () => site.requests.some((request) => request.path === SLOW_PATH && Number.isNaN(request.endedAt));
    const ready = () => {
      if (child.exitCode !== null) throw new Error(`crawl exited early (${child.exitCode})`);
      return readRecords(out).length >= 10 && slowInFlight() ? true : undefined;
    };
    await waitFor(ready, { timeoutMs: 120_000, intervalMs: 50, what: 'the slow page to be fetched' }).catch(
      (error: unknown) => {
        throw new Error(`${String(error)}\n${output.stderr}`);
      },
    );
    const processes = descendantsOf(pid);
    expect(processes.filter((each) => processTable().some((row) => row.pid === each && row.cmdline.includes(' worker ')))).toHaveLength(2);

    await redis.halt(); // Not started again within the limit.
    const haltedAt = performance.now();
    const code = await exited(child);
    process.stdout.write(`redis outage: crawl exited ${((performance.now() - haltedAt) / 1000).toFixed(1)} s after Redis stopped\n`);

    expect(code, output.stderr).toBe(3);
    const lines = [...output.stderr.matchAll(CRAWL_STOPPED)];
    expect(lines, output.stderr).toHaveLength(1);
    expect(Number(lines[0]?.[1])).toBeGreaterThanOrEqual(4);
    expect(output.stderr).not.toMatch(STACK_FRAME);
    expect(output.stderr).not.toContain('Unhandled');
    // It said once that it waits for Redis, before giving up (not once per reconnect attempt).
    expect(output.stderr.match(/lost the connection to Redis; waiting up to 4s/g)).toHaveLength(1);
    expect(output.stderr.indexOf('lost the connection to Redis')).toBeLessThan(output.stderr.search(CRAWL_STOPPED));
    // Nor do its workers repeat their connection errors on every reconnect attempt.
    expect(output.stderr).not.toContain('ECONNREFUSED');
    // Its workers are gone with it, and the config file it handed them.
    expect(processes.filter(alive)).toEqual([]);
    expect(readdirSync(join(dir, 'run')).filter((name) => name.startsWith('worker-config-'))).toEqual([]);
    expect(readRecords(out).length).toBeLessThan(site.reachable({ seeds: site.seeds, maxDepth: 1_000, scope: 'host' }).size);
  }, 180_000);

  it('run again once Redis is back, the same command finishes, and the site saw every page (twice only for jobs in flight at the stop)', async () => {
    await redis.start(); // Same port and directory: the AOF brings the crawl's state back.
    // What was in flight when Redis went away, as Redis kept it: these jobs run again.
    inFlightAtStop = (await readCrawlProgress(redis.client(), namespace)).active;

    const { child, output } = startCrawl();
    const code = await exited(child);
    expect(code, output.stderr).toBe(0);
    expect(output.stderr).toContain('resuming the unfinished crawl');

    const expected = site.reachable({ seeds: site.seeds, maxDepth: 1_000, scope: 'host' });
    const fetches = [...expected].map((url) => ({ url, count: site.requestCount(url) }));
    expect(fetches.filter((page) => page.count === 0), 'pages never fetched').toEqual([]);
    const twice = fetches.filter((page) => page.count > 1);
    // Exactly once, except for the jobs in flight at the stop (none: exactly once for every page);
    // the slow page was one of them, its request cut off when the worker stopped.
    expect(twice.length, JSON.stringify(twice)).toBeLessThanOrEqual(inFlightAtStop);
    expect(fetches.every((page) => page.count <= 2)).toBe(true);
    expect(twice.map((page) => new URL(page.url).pathname)).toContain(SLOW_PATH);
    const urls = readRecords(out).map((record) => record.url);
    expect(new Set(urls)).toEqual(expected);
    expect(duplicates(urls).length).toBeLessThanOrEqual(inFlightAtStop);
    process.stdout.write(`redis outage: ${inFlightAtStop} jobs in flight at the stop, ${twice.length} pages fetched twice, ${expected.size} pages\n`);
  }, 180_000);
});

describe('Redis gone longer than --redis-outage-limit under a standalone worker', () => {
  it('the worker exits with code 3 and its own one line, no stack trace', async () => {
    await redis.start().catch(() => undefined); // Running already, unless a test above failed before starting it again.
    const child = startCli(['worker', '--namespace', 'outage-worker', '--redis-outage-limit', '2s', '--state-dir', dir, '--out', join(dir, 'worker.jsonl')], {
      env: cliEnv(redis.url),
    });
    child.stdin?.end();
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`worker exited early (${child.exitCode})\n${stderr}`);
        return stderr.includes('started (concurrency') ? true : undefined;
      },
      { timeoutMs: 120_000, what: 'the worker to start' },
    );

    await redis.halt();
    const code = await exited(child);
    expect(code, stderr).toBe(3);
    const lines = stderr.match(/^crawlq: Redis unreachable for \d+\.\d s \(limit 2 s\); worker stopped\. Start it again once Redis is back; the jobs it had in flight return to the queue\.$/gm);
    expect(lines, stderr).toHaveLength(1);
    expect(stderr).not.toMatch(STACK_FRAME);
    expect(stderr).not.toContain('Unhandled');
    // It said once that it waits for Redis, and did not repeat connection errors meanwhile.
    expect(stderr.match(/lost the connection to Redis; waiting up to 2s/g), stderr).toHaveLength(1);
    expect(stderr).not.toContain('ECONNREFUSED');
    await redis.start();
  }, 120_000);
});

describe('the private redis-server gone longer than --redis-outage-limit', () => {
  it('crawl without REDIS_URL stops with exit code 3 and says where the server logs', async () => {
    await using own = await startDemoSite({ hosts: ['127.0.0.4'], pagesPerHost: 200, linksPerPage: 4 });
    const stateDir = mkdtempSync(join(tmpdir(), 'crawlq-outage-embedded-'));
    const child = startCli(
      ['crawl', ...own.seeds, '--out', join(stateDir, 'results.jsonl'), '--namespace', 'outage-embedded', '--allow-private-network', '--rate', '5/1s', '--workers', '2', '--state-dir', stateDir, '--redis-outage-limit', '3s'],
      { env: cliEnv(undefined) },
    );
    child.stdin?.end();
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`crawl exited early (${child.exitCode})\n${stderr}`);
        return readRecords(join(stateDir, 'results.jsonl')).length >= 3 ? true : undefined;
      },
      { timeoutMs: 120_000, what: 'the first pages' },
    );
    const processes = descendantsOf(child.pid ?? -1);
    const server = JSON.parse(readFileSync(join(stateDir, 'redis', 'server.json'), 'utf8')) as { pid: number };

    process.kill(server.pid, 'SIGTERM'); // The server dies under the crawl (an OOM kill, an operator's mistake).
    const code = await exited(child);
    expect(code, stderr).toBe(3);
    const log = join(stateDir, 'redis', 'redis.log');
    const line = `crawlq: Redis unreachable for [\\d.]+ s \\(limit 3 s\\); crawl stopped\\. Run the same command again to resume\\. The private redis-server's log: ${log.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`;
    expect(stderr.match(new RegExp(`^${line}$`, 'gm')), stderr).toHaveLength(1);
    expect(stderr).not.toMatch(STACK_FRAME);
    expect(processes.filter(alive)).toEqual([]);
  }, 180_000);
});
